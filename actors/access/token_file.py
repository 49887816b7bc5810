"""Where the server's bearer token is kept: a file in the data directory.

Its own module, with nothing but ``pathlib``: a client that only reads the token
(``troupe run`` through a server) need not import what the server checks it with
(``hmac``, ``secrets``: OpenSSL's hashes, a quarter of the interpreter's start)."""

from __future__ import annotations

from pathlib import Path

TOKEN_FILE = "token"


def token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE
