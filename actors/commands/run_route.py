"""Which way ``troupe run`` goes: to a running server through the blocking client
(:mod:`actors.commands.run_direct`), or the trio path. Its own module so that a run
the blocking client cannot have (``--embedded``, an endpoint's flags, a terminal)
decides that without importing the client and its WebSocket (issue 36)."""

from __future__ import annotations

import argparse
import sys

from actors.commands.common import advertised_server, check_url, data_dir
from actors.commands.errors import CommandError
from actors.config import Settings

ENDPOINT_FLAGS = ("base_url", "api_key", "wire")
"""The endpoint flags: with any of these, a run is embedded (it makes its own
model route; :mod:`actors.commands.session_host` reads them too)."""


def server_for(args: argparse.Namespace, settings: Settings) -> str | None:
    """The server this run should go to when the blocking client can serve it,
    else None (see :mod:`actors.commands.run_direct`)."""
    if args.input_format == "stream-json" or getattr(args, "embedded", False):
        return None
    if args.output_format == "text" and sys.stdin.isatty():
        return None  # typed lines steer the run and answer its approvals
    if args.ssh_host or settings.get("environment"):
        return None
    url = settings.get("connect")
    if url:
        try:
            return check_url(url)
        except CommandError:
            return None  # the trio path says what is wrong with it
    if any(getattr(args, name, None) for name in ENDPOINT_FLAGS):
        return None
    return advertised_server(data_dir(args))
