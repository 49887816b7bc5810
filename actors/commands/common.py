"""What the commands share: the data directory, the server's address and token."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from actors.server.auth import token_path
from actors.store import default_data_dir

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_TURN_LIMIT = 53


def data_dir(args: argparse.Namespace) -> Path:
    """``--data-dir``, else ``$TROUPE_DATA_DIR``, else the XDG data directory."""
    given = getattr(args, "data_dir", None)
    return Path(given).expanduser() if given else default_data_dir()


def server_url(args: argparse.Namespace) -> str | None:
    """``--connect``, else the URL the last ``troupe serve`` wrote in the data dir."""
    if getattr(args, "connect", None):
        return args.connect
    try:
        return json.loads((data_dir(args) / "server.json").read_text())["url"]
    except (OSError, ValueError, KeyError):
        return None


def read_token(args: argparse.Namespace) -> str | None:
    """``--token``, else ``$TROUPE_TOKEN``, else the token file in the data dir."""
    import os

    if getattr(args, "token", None):
        return args.token
    if os.environ.get("TROUPE_TOKEN"):
        return os.environ["TROUPE_TOKEN"]
    try:
        return token_path(data_dir(args)).read_text().strip()
    except OSError:
        return None
