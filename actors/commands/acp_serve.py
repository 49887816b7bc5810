"""The runtime side of ``troupe acp``: the agent in front of a server (embedded or
``--connect``), from the second line of stdin on (:mod:`actors.commands.acp`)."""

from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import trio

from actors.acp.agent import AcpAgent
from actors.acp.handshake import Handshake
from actors.commands.common import EXIT_ERROR
from actors.commands.errors import primary
from actors.commands.session_host import open_host, session_defaults
from actors.commands.settings_flags import settings_for
from actors.config import Settings
from protocol.client_errors import ConnectionRefused

if TYPE_CHECKING:
    from protocol.client import TroupeClient


async def stdin_lines(unread: bytes = b"") -> AsyncIterator[bytes]:
    """stdin's lines, ``unread`` (what was read before the agent started) first,
    and an empty one (``b""``) each time all that was sent so far has been read:
    the agent starts its server then (see :meth:`AcpAgent.serve`)."""
    stream = trio.lowlevel.FdStream(os.dup(0))
    *lines, buffer = unread.split(b"\n")
    for line in lines:
        yield line
    waiting = select.poll()
    waiting.register(0, select.POLLIN)
    async with stream:
        while True:
            if not waiting.poll(0):
                yield b""
            chunk = await stream.receive_some(65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line
    if buffer:
        yield buffer


def serve_editor(args: argparse.Namespace, handshake: Handshake) -> int:
    return trio.run(_serve, args, handshake)


async def _serve(args: argparse.Namespace, handshake: Handshake) -> int:
    try:
        working_dir = Path.cwd()
        settings = settings_for(args, working_dir)
        # the configured session settings (model, policy ...), the same as run's and
        # the server's; the editor's MCP servers are added per session
        defaults = msgspec.structs.replace(session_defaults(settings), mcp_servers=[])
        async with trio.lowlevel.FdStream(os.dup(1)) as output:
            host = _client(args, settings, working_dir)
            agent = AcpAgent(output, defaults, handshake.client_capabilities)
            await agent.serve(stdin_lines(handshake.unread), host)
    except BaseException as error:  # the server's start fails inside the agent's nursery
        leaf = primary(error)
        if not isinstance(leaf, ConnectionRefused | OSError):
            raise
        print(f"troupe acp: {leaf}", file=sys.stderr)
        return EXIT_ERROR
    return 0


@asynccontextmanager
async def _client(
    args: argparse.Namespace, settings: Settings, working_dir: Path
) -> AsyncIterator[TroupeClient]:
    async with open_host(args, settings, working_dir) as host:
        yield host.client
