"""Where a command's session runs: on a server (``--connect``), or in a server
embedded in the command itself, on a free loopback port that nobody else is told
about. Either way the command speaks the same protocol to it."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from actors.commands.common import data_dir, read_token
from actors.server.models import ModelSettings
from actors.server.server import ServerConfig, run_server
from protocol.client import TroupeClient, connect


@asynccontextmanager
async def embedded_server(config: ServerConfig) -> AsyncIterator[tuple[str, str]]:
    """Run a server for the duration of the block; yields (url, token)."""
    async with trio.open_nursery() as nursery:
        server = await nursery.start(run_server, config)
        try:
            yield server.url, server.token
        finally:
            server.stop()


@asynccontextmanager
async def open_client(args: argparse.Namespace, working_dir: Path) -> AsyncIterator[TroupeClient]:
    """A client of ``--connect URL``, or of a server embedded in this process."""
    if getattr(args, "connect", None):
        async with connect(args.connect, read_token(args)) as client:
            yield client
        return
    config = ServerConfig(
        data_dir=data_dir(args),
        port=0,
        working_dir=working_dir,
        models=ModelSettings(args.profile, args.base_url, args.api_key, tuple(args.fallback or ())),
        advertise=False,
    )
    async with embedded_server(config) as (url, token), connect(url, token) as client:
        yield client
