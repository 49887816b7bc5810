"""``troupe acp``: serve the Agent Client Protocol on stdin/stdout for an editor."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import trio

from actors.acp.agent import AcpAgent
from actors.commands.common import EXIT_ERROR
from actors.commands.run import settings_for
from actors.commands.session_host import open_host, session_defaults
from protocol.client import ConnectionRefused


async def stdin_lines() -> AsyncIterator[bytes]:
    stream = trio.lowlevel.FdStream(os.dup(0))
    buffer = b""
    async with stream:
        while chunk := await stream.receive_some(65536):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line
    if buffer:
        yield buffer


def run(args: argparse.Namespace) -> int:
    try:
        return trio.run(_serve, args)
    except KeyboardInterrupt:
        return 130


async def _serve(args: argparse.Namespace) -> int:
    try:
        working_dir = Path.cwd()
        settings = settings_for(args, working_dir)
        # the configured session settings (model, policy ...), the same as run's and
        # the server's; the editor's MCP servers are added per session
        defaults = msgspec.structs.replace(session_defaults(settings), mcp_servers=[])
        async with (
            open_host(args, settings, working_dir) as host,
            trio.lowlevel.FdStream(os.dup(1)) as output,
        ):
            await AcpAgent(host.client, output, defaults).serve(stdin_lines())
    except (ConnectionRefused, OSError) as error:
        print(f"troupe acp: {error}", file=sys.stderr)
        return EXIT_ERROR
    return 0
