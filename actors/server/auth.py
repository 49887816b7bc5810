"""Who may connect: the bearer token and the Origin allowlist.

The token is generated on first start and kept in the data directory with mode
0600, so only the user who runs the server (and programs acting for them) can read
it. Browsers cannot set an Authorization header on a WebSocket, so the hello frame
may carry the token instead. Browsers do send an Origin header, and a page on
another site must not drive a local agent, so a present Origin must be on the
allowlist (loopback origins by default); non-browser clients send none.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

TOKEN_FILE = "token"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def load_or_create_token(data_dir: Path) -> str:
    """The server's token, created (mode 0600, never world-readable) on first use."""
    path = token_path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        token = path.read_text().strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    os.chmod(path, 0o600)
    return token


def token_matches(expected: str, offered: str | None) -> bool:
    """Constant-time comparison, so the token cannot be guessed byte by byte."""
    return offered is not None and hmac.compare_digest(expected.encode(), offered.encode())


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if that is what it is."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def origin_allowed(origin: str | None, allowlist: frozenset[str]) -> bool:
    """No Origin (not a browser) is fine. ``loopback`` in the allowlist admits any
    http(s) origin on a loopback host, any port; other entries match exactly."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/")
    if origin in allowlist:
        return True
    if "loopback" in allowlist:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK_HOSTS
    return False
