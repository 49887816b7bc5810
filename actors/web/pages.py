"""The web page's HTTP side: the login exchange and the static assets.

Every asset needs the login cookie except ``/login``, which trades a one-time login
token (printed by ``troupe serve``) for the cookie and redirects to the page. The
page's data never travels over HTTP: it is the WebSocket protocol, authenticated by
the same cookie at the upgrade. A present Origin must be the server's own (or listed)
here too. One request per connection (``Connection: close``): the page loads a
handful of files, then lives on its WebSocket.
"""

from __future__ import annotations

import secrets
from importlib import resources
from types import MappingProxyType
from urllib.parse import parse_qs, urlsplit

import h11
import trio

from actors.server.auth import (
    WEB_COOKIE,
    Origins,
    cookie_from,
    origin_allowed,
    sign_web_cookie,
    token_matches,
    web_cookie_valid,
)

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def _assets() -> dict[str, tuple[str, str]]:
    """Every file of ``static/`` by its URL path (the page's ES modules import each
    other by name, so a new module needs no entry here); ``/`` is the index."""
    found: dict[str, tuple[str, str]] = {"/": ("index.html", CONTENT_TYPES[".html"])}
    for entry in resources.files("actors.web").joinpath("static").iterdir():
        suffix = "." + entry.name.rpartition(".")[2]
        if entry.is_file() and suffix in CONTENT_TYPES:
            found[f"/{entry.name}"] = (entry.name, CONTENT_TYPES[suffix])
    return found


ASSETS = MappingProxyType(_assets())
SECURITY_HEADERS = [
    ("content-security-policy",
     "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
]  # fmt: skip
COOKIE_MAX_AGE = 30 * 24 * 3600

LOGIN_REQUIRED = (
    b"<!doctype html><meta charset=utf-8><title>Troupe: log in</title>"
    b"<p style='font:16px system-ui;margin:3em'>Not logged in. Open the login URL that "
    b"<code>troupe serve</code> printed (<code>troupe serve --open</code> opens it).</p>"
)


def asset(name: str) -> bytes:
    return resources.files("actors.web").joinpath("static", name).read_bytes()


class LoginTokens:
    """One-time login tokens: each opens one browser session, then is spent."""

    def __init__(self) -> None:
        self._unused: set[str] = set()

    def issue(self) -> str:
        token = secrets.token_urlsafe(24)
        self._unused.add(token)
        return token

    def redeem(self, offered: str) -> bool:
        for token in self._unused:
            if token_matches(token, offered):
                self._unused.discard(token)
                return True
        return False


class WebPages:
    """Answers the plain HTTP requests that reach the server's port."""

    def __init__(self, token: str, origins: Origins) -> None:
        self._token = token
        self._origins = origins
        self.logins = LoginTokens()

    async def handle(self, stream: trio.abc.Stream, head: bytes) -> None:
        connection = h11.Connection(h11.SERVER)
        connection.receive_data(head)
        try:
            request = connection.next_event()
        except h11.RemoteProtocolError:
            await _send(stream, connection, 400, b"bad request\n", "text/plain")
            return
        if not isinstance(request, h11.Request):
            await _send(stream, connection, 400, b"bad request\n", "text/plain")
            return
        status, body, content_type, extra = self.respond(request)
        await _send(stream, connection, status, body, content_type, extra)

    def respond(self, request: h11.Request) -> tuple[int, bytes, str, list[tuple[str, str]]]:
        """(status, body, content type, extra headers) for one request."""
        headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                   for name, value in request.headers}  # fmt: skip
        if not origin_allowed(headers.get("origin"), self._origins):
            return 403, b"origin not allowed\n", "text/plain", []
        if request.method != b"GET":
            return 405, b"method not allowed\n", "text/plain", [("allow", "GET")]
        url = urlsplit(request.target.decode("latin-1"))
        if url.path == "/login":
            offered = parse_qs(url.query).get("token", [""])[0]
            if not self.logins.redeem(offered):
                return 401, b"this login link is spent or wrong\n", "text/plain", []
            cookie = (
                f"{WEB_COOKIE}={sign_web_cookie(self._token)}; Path=/; HttpOnly; "
                f"SameSite=Strict; Max-Age={COOKIE_MAX_AGE}"
            )
            return 303, b"", "text/plain", [("set-cookie", cookie), ("location", "/")]
        if not web_cookie_valid(self._token, cookie_from(headers.get("cookie"))):
            return 401, LOGIN_REQUIRED, "text/html; charset=utf-8", []
        found = ASSETS.get(url.path)
        if found is None:
            return 404, b"not found\n", "text/plain", []
        name, content_type = found
        return 200, asset(name), content_type, []


async def _send(
    stream: trio.abc.Stream,
    connection: h11.Connection,
    status: int,
    body: bytes,
    content_type: str,
    extra: list[tuple[str, str]] | None = None,
) -> None:
    headers = [
        ("content-type", content_type),
        ("content-length", str(len(body))),
        ("connection", "close"),
        *SECURITY_HEADERS,
        *(extra or []),
    ]
    response = h11.Response(status_code=status, headers=headers)
    data = connection.send(response) or b""
    data += connection.send(h11.Data(data=body)) or b""
    data += connection.send(h11.EndOfMessage()) or b""
    await stream.send_all(data)
