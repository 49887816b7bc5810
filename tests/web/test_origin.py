"""Reproduction (issue 30): a page on another port of 127.0.0.1 opened the server's
WebSocket with the login cookie (cookies ignore ports; every loopback origin was
admitted). Real chromium: the logged-in browser loads a page from a second local
HTTP server, whose script tries the socket; the server's own page still gets in."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import Page

from tests.web.conftest import TrioThread

TRY_SOCKET = """(url) => new Promise((done) => {
  let socket;
  try { socket = new WebSocket(url); } catch (error) { done('refused: ' + error); return; }
  socket.onopen = () => socket.send(JSON.stringify({type: 'hello', version: 1}));
  socket.onmessage = (message) => { done(JSON.parse(message.data).type); socket.close(); };
  socket.onerror = () => done('error');
  socket.onclose = (closed) => done('closed ' + closed.code);
})"""


@contextmanager
def other_site() -> Iterator[str]:
    """A plain page on another loopback port: the attacker's site."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>elsewhere</title><p>another site"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_on_another_port_with_the_cookie_cannot_open_the_socket(
    page: Page, start_web: Callable[..., TrioThread]
) -> None:
    with start_web({"turns": [{"text": "ok"}]}) as web, other_site() as elsewhere:
        assert web.server is not None
        socket_url = web.server.url
        page.goto(web.login_url)  # logged in: the cookie is set for 127.0.0.1
        cookies = page.context.cookies()
        assert any(cookie.get("name") == "troupe_web" for cookie in cookies)
        assert page.evaluate(TRY_SOCKET, socket_url) == "welcome"  # the server's own page

        page.goto(elsewhere)
        assert page.title() == "elsewhere"
        outcome = page.evaluate(TRY_SOCKET, socket_url)
        assert outcome != "welcome" and outcome.startswith(("error", "closed")), outcome

        page.goto(web.server.http_url)  # and back on the server's page it works again
        assert page.evaluate(TRY_SOCKET, socket_url) == "welcome"
