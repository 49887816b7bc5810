"""What the commands share: the data directory, the server's address and token,
and connecting to a server with failures worded for people."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from actors.commands.errors import (
    EXIT_BAD_INPUT,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TURN_LIMIT,
    CommandError,
    unreachable,
)

if TYPE_CHECKING:
    from protocol.client import TroupeClient

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TURN_LIMIT",
    "advertised_server",
    "check_url",
    "connect_to",
    "data_dir",
    "read_token",
    "server_url",
]


def data_dir(args: argparse.Namespace) -> Path:
    """``--data-dir``, else ``$TROUPE_DATA_DIR``, else the XDG data directory."""
    given = getattr(args, "data_dir", None)
    if given:
        return Path(given).expanduser()
    from actors.store.paths import default_data_dir

    return default_data_dir()


def advertised_server(directory: Path) -> str | None:
    """The URL in ``server.json`` if the server that wrote it is still running.

    A server that stopped without cleaning up (killed, crashed) leaves a stale
    file; its process id tells, so nobody waits on a dead address."""
    try:
        info = json.loads((directory / "server.json").read_text())
        url, pid = str(info["url"]), int(info.get("pid", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, someone else's
    return url


def server_url(args: argparse.Namespace) -> str | None:
    """``--connect``, else the URL of the running ``troupe serve`` of the data dir."""
    if getattr(args, "connect", None):
        return check_url(args.connect)
    return advertised_server(data_dir(args))


def check_url(url: str) -> str:
    """A server URL must be ``ws://`` or ``wss://``; say so for ``http://``."""
    parts = urlsplit(url)
    if parts.scheme in ("ws", "wss") and parts.hostname:
        return url
    if parts.scheme in ("http", "https") and parts.hostname:
        fixed = url.replace(parts.scheme, "ws" if parts.scheme == "http" else "wss", 1)
        raise CommandError(
            f"{url} is an HTTP URL; the server speaks WebSocket: use {fixed}", EXIT_BAD_INPUT
        )
    raise CommandError(
        f"{url!r} is not a server URL; use ws://HOST:PORT/ (troupe serve prints it)",
        EXIT_BAD_INPUT,
    )


def read_token(args: argparse.Namespace) -> str | None:
    """``--token``, else ``$TROUPE_TOKEN``, else the token file in the data dir."""
    if getattr(args, "token", None):
        return args.token
    if os.environ.get("TROUPE_TOKEN"):
        return os.environ["TROUPE_TOKEN"]
    try:
        from actors.access.token_file import token_path

        return token_path(data_dir(args)).read_text().strip()
    except OSError:
        return None


@asynccontextmanager
async def connect_to(url: str, token: str | None) -> AsyncIterator[TroupeClient]:
    """A connected client; a failure to connect is a :class:`CommandError` that
    names the URL and the reason (refused, wrong token, nothing listening)."""
    from protocol.client import connect  # here: a listing without a server needs none

    check_url(url)
    async with AsyncExitStack() as stack:
        try:
            client = await stack.enter_async_context(connect(url, token))
        except BaseException as error:
            worded = unreachable(error, url)
            if worded is None:
                raise
            raise worded from error
        yield client
