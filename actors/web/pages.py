"""The web page's HTTP side: the login exchange and the static assets.

Every asset needs the login cookie except ``/login``, which trades a one-time login
token (printed by ``troupe serve`` or ``troupe login-link``) for the cookie and
redirects to the page, and the few files the login page itself shows (its stylesheet
and the icon). Without the cookie, ``/`` redirects to ``/login``, a page saying how to
log in: a browser's first visit gets a page, not a failed load in its console.
``POST /login-link`` with the server's token as a bearer mints a fresh one-time link
for ``troupe login-link``: the login tokens live in this process, so the running
server must issue them. ``/healthz`` (the process serves) and ``/readyz`` (it can
take new work: the store writes) answer load balancers and supervisors without a
login; they say no more than a one-word state. The page's data never travels over
HTTP: it is the WebSocket protocol, authenticated by the same cookie at the upgrade.
A present Origin must be the server's own (or listed) here too. One request per
connection (``Connection: close``): the page loads a handful of files, then lives on
its WebSocket.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from importlib import resources
from types import MappingProxyType
from urllib.parse import parse_qs, urlsplit

import h11
import trio

from actors.access.auth import (
    WEB_COOKIE,
    Origins,
    bearer,
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
Answer = tuple[int, bytes, str, list[tuple[str, str]]]
"""An HTTP answer: status, body, content type, extra headers."""
PUBLIC = frozenset({"/login.css", "/favicon.svg"})
"""What the login page shows, served without the cookie (nothing of the app)."""
PROBES = frozenset({"/healthz", "/readyz"})
"""Liveness and readiness for load balancers: no cookie, no token, a word of state."""
TOOL_DIFFS = "/tool_diffs.js"
"""The one module made here, not read from ``static/``: which arguments of the
built-in tools show their calls as diffs (:mod:`actors.web.tool_diffs`)."""

LOGIN_PAGE = (
    "<!doctype html><html lang=en><head><meta charset=utf-8>"
    "<meta name=viewport content='width=device-width, initial-scale=1'>"
    "<title>Troupe: log in</title><link rel=icon href=/favicon.svg>"
    "<link rel=stylesheet href=/login.css></head><body><main class=login>"
    "<h1>Troupe</h1><p>{message}</p><p>Open the one-time login link that "
    "<code>troupe serve</code> printed, or get a fresh one from the running server with "
    "<code>troupe login-link</code> (<code>--open</code> opens it in a browser). Each link logs "
    "in one browser, once.</p></main></body></html>"
)
NOT_LOGGED_IN = LOGIN_PAGE.format(message="Not logged in.").encode()
LINK_SPENT = LOGIN_PAGE.format(message="This login link is spent or wrong.").encode()


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


Readiness = Callable[[], str | None]
"""Why the server cannot take new work now (``store_unavailable``), or None when it
can."""


def _always_ready() -> str | None:
    return None


class WebPages:
    """Answers the plain HTTP requests that reach the server's port."""

    def __init__(
        self, token: str, origins: Origins, base_url: str, readiness: Readiness = _always_ready
    ) -> None:
        self._token = token
        self._origins = origins
        self._base_url = base_url
        self._readiness = readiness
        self.logins = LoginTokens()

    def login_url(self) -> str:
        """A fresh one-time URL that logs a browser in to the page."""
        return f"{self._base_url}login?token={self.logins.issue()}"

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

    def respond(self, request: h11.Request) -> Answer:
        """(status, body, content type, extra headers) for one request."""
        headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                   for name, value in request.headers}  # fmt: skip
        if not origin_allowed(headers.get("origin"), self._origins):
            return 403, b"origin not allowed\n", "text/plain", []
        url = urlsplit(request.target.decode("latin-1"))
        if url.path == "/login-link" and request.method == b"POST":
            return self._mint(headers)
        if url.path in PROBES and request.method == b"GET":
            return self._probe(url.path)
        if request.method != b"GET":
            return 405, b"method not allowed\n", "text/plain", [("allow", "GET")]
        logged_in = web_cookie_valid(self._token, cookie_from(headers.get("cookie")))
        if url.path == "/login":
            return self._login(parse_qs(url.query).get("token", [""])[0], logged_in)
        if not logged_in and url.path == "/":
            return 303, b"", "text/plain", [("location", "/login")]
        if not logged_in and url.path not in PUBLIC:
            return 401, b"not logged in\n", "text/plain", []
        if url.path == TOOL_DIFFS:
            from actors.web.tool_diffs import tool_diffs_module

            return 200, tool_diffs_module(), CONTENT_TYPES[".js"], []
        found = ASSETS.get(url.path)
        if found is None:
            return 404, b"not found\n", "text/plain", []
        name, content_type = found
        return 200, asset(name), content_type, []

    def _probe(self, path: str) -> Answer:
        """``/healthz``: 200 while the process serves HTTP at all. ``/readyz``: 200
        when it can take new sessions and inputs, else 503 naming why, so a load
        balancer sends new work elsewhere while reads here still work."""
        reason = self._readiness() if path == "/readyz" else None
        if reason is None:
            return 200, b"ok\n", "text/plain", []
        return 503, f"{reason}\n".encode(), "text/plain", [("retry-after", "1")]

    def _login(self, offered: str, logged_in: bool) -> Answer:
        """Trade a one-time token for the cookie; without one, the login page. A
        browser already logged in goes to the page whatever link it followed."""
        if offered and self.logins.redeem(offered):
            cookie = (
                f"{WEB_COOKIE}={sign_web_cookie(self._token)}; Path=/; HttpOnly; "
                f"SameSite=Strict; Max-Age={COOKIE_MAX_AGE}"
            )
            return 303, b"", "text/plain", [("set-cookie", cookie), ("location", "/")]
        if logged_in:
            return 303, b"", "text/plain", [("location", "/")]
        if offered:
            return 401, LINK_SPENT, CONTENT_TYPES[".html"], []
        return 200, NOT_LOGGED_IN, CONTENT_TYPES[".html"], []

    def _mint(self, headers: dict[str, str]) -> Answer:
        """A fresh login link for the holder of the server's token (never for a
        cookie: a page cannot mint links, and a browser cannot set this header on a
        request to another origin without a preflight this server never answers)."""
        if not token_matches(self._token, bearer(headers.get("authorization"))):
            return 401, b'{"error":"unauthorized"}\n', "application/json", []
        body = json.dumps({"url": self.login_url()}).encode() + b"\n"
        return 200, body, "application/json", []


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
