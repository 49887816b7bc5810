"""Who may connect: the bearer token and the Origin allowlist.

The token is generated on first start and kept in the data directory with mode
0600, so only the user who runs the server (and programs acting for them) can read
it. Browsers cannot set an Authorization header on a WebSocket, so the hello frame
may carry the token instead. Browsers do send an Origin header, and a page on
another site must not drive a local agent, so a present Origin must be the
server's own origin (scheme, host and port) or one the user listed; non-browser
clients send none. Another port on the same host is another origin: a page served
there carries the login cookie (cookies ignore ports) and must still be refused.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from actors.access.token_file import token_path

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


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


WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})


class Origins(msgspec.Struct, frozen=True):
    """The browser origins a server admits: its own, and those the user listed.

    ``port`` is the port the server listens on; ``hosts`` the names that reach it
    (loopback names and the host it binds). Cookies ignore ports, so a page on
    another port of the same host carries the login cookie: only the port tells
    the server's own page from it."""

    port: int
    hosts: frozenset[str] = LOOPBACK_HOSTS
    listed: frozenset[str] = frozenset()

    @classmethod
    def serving(cls, host: str, port: int, listed: frozenset[str]) -> Origins:
        bound = frozenset() if host in WILDCARD_HOSTS else frozenset({host.strip("[]")})
        return cls(port, LOOPBACK_HOSTS | bound, frozenset(o.rstrip("/") for o in listed))

    def own(self, origin: str) -> bool:
        """Whether ``origin`` is the server's own: http(s), one of its host names, its port."""
        try:
            parts = urlsplit(origin)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        return (
            parts.scheme in ("http", "https")
            and (parts.hostname or "") in self.hosts
            and port == self.port
        )


def origin_allowed(origin: str | None, origins: Origins) -> bool:
    """No Origin (not a browser) is fine; a browser's must be the server's own
    origin (scheme, host and port) or one the user listed exactly."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/")
    return origin in origins.listed or origins.own(origin)


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
