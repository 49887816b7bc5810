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


def new_token() -> str:
    """256 random bits, URL-safe, never starting with ``-``: one token in 64 would,
    and ``troupe run --token -Xy...`` then reads as an option with its value missing."""
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


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
    token = new_token()
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


# -- the web page's login -------------------------------------------------------------
# The browser never holds the long-lived token: ``troupe serve`` prints a URL with a
# one-time login token, which the page exchanges for a cookie. The cookie is a nonce
# signed with the server's token (HMAC), so it survives a server restart (the token is
# kept in the data directory) and is revoked by deleting the token file.

WEB_COOKIE = "troupe_web"


def sign_web_cookie(token: str) -> str:
    """A fresh cookie value: ``nonce.signature``."""
    nonce = secrets.token_urlsafe(18)
    return f"{nonce}.{_signature(token, nonce)}"


def web_cookie_valid(token: str, value: str | None) -> bool:
    if not value or "." not in value:
        return False
    nonce, _, signature = value.partition(".")
    return hmac.compare_digest(_signature(token, nonce).encode(), signature.encode())


def cookie_from(header: str | None) -> str | None:
    """The value of the web cookie in a ``Cookie`` request header, if any."""
    for part in (header or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == WEB_COOKIE:
            return value
    return None


def _signature(token: str, nonce: str) -> str:
    digest = hmac.new(token.encode(), f"troupe-web:{nonce}".encode(), "sha256").hexdigest()
    return digest[:43]
