"""Who gets the page and its data: the one-time login link, the cookie, the Origin
check, on the same port as the WebSocket (real sockets, no browser needed)."""

from __future__ import annotations

import json

import trio
from trio_websocket import ConnectionClosed, ConnectionRejected, open_websocket

from actors.access.auth import WEB_COOKIE
from tests.wire.conftest import StartStack
from tests.wire.conftest import start_stack as start_stack  # the fixture

FOREIGN = "http://evil.example"


async def http_get(
    port: int, target: str, *headers: str, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", *headers, "", ""]
        await stream.send_all("\r\n".join(lines).encode())
        data = b""
        while chunk := await stream.receive_some():
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    parsed = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        parsed[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), parsed, body


async def test_login_link_is_one_time_and_the_cookie_opens_page_and_socket(
    start_stack: StartStack,
) -> None:
    async with start_stack() as stack:
        port = stack.server.port
        for target in ("/app.js", "/app.css", "/stream.js", "/session_view.js", "/index.html"):
            status, _, body = await http_get(port, target)
            assert status == 401 and b"<" not in body, target
        # Without the cookie the page is the login page, with a 200 (not a failed load)
        # and only its own stylesheet and icon public.
        status, headers, _ = await http_get(port, "/")
        assert status == 303 and headers["location"] == "/login"
        status, headers, body = await http_get(port, "/login")
        assert status == 200 and b"Not logged in" in body and b"troupe login-link" in body
        assert b"style=" not in body and b"<style" not in body and b"<script" not in body
        assert "default-src 'self'" in headers["content-security-policy"]
        for public in ("/login.css", "/favicon.svg"):
            assert (await http_get(port, public))[0] == 200, public
        status, _, body = await http_get(port, "/login?token=guessed")
        assert status == 401 and b"spent or wrong" in body
        assert (await http_get(port, f"/login?token={stack.token}"))[0] == 401  # not a login token

        login = stack.server.login_url()
        target = login.split(str(port), 1)[1]
        status, headers, _ = await http_get(port, target)
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"].split(";", 1)[0]
        assert cookie.startswith(f"{WEB_COOKIE}=") and stack.token not in cookie
        assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
        assert (await http_get(port, target))[0] == 401  # spent
        # A browser already logged in that follows a spent link just goes to the page.
        status, headers, _ = await http_get(port, target, f"Cookie: {cookie}")
        assert status == 303 and headers["location"] == "/" and "set-cookie" not in headers

        status, headers, body = await http_get(port, "/", f"Cookie: {cookie}")
        assert status == 200 and b"<title>Troupe</title>" in body
        assert "default-src 'self'" in headers["content-security-policy"]
        assert (await http_get(port, "/app.js", f"Cookie: {cookie}"))[0] == 200
        status, headers, _ = await http_get(port, "/stream.js", f"Cookie: {cookie}")
        assert status == 200 and headers["content-type"].startswith("text/javascript")
        for outside in ("/../pages.py", "/static/app.js", "/__init__.py"):
            assert (await http_get(port, outside, f"Cookie: {cookie}"))[0] == 404, outside
        assert (await http_get(port, "/nothing", f"Cookie: {cookie}"))[0] == 404
        forged = f"{WEB_COOKIE}=abc.{'0' * 43}"
        assert (await http_get(port, "/", f"Cookie: {forged}"))[0] == 303  # to /login
        assert (await http_get(port, "/app.js", f"Cookie: {forged}"))[0] == 401
        foreign = await http_get(port, "/", f"Cookie: {cookie}", f"Origin: {FOREIGN}")
        assert foreign[0] == 403

        # The WebSocket: the cookie authenticates the upgrade; a foreign Origin is refused.
        hello = json.dumps({"type": "hello", "version": 1})
        async with open_websocket(
            "127.0.0.1", port, "/", use_ssl=False,
            extra_headers=[(b"cookie", cookie.encode()), (b"origin", f"http://127.0.0.1:{port}".encode())],
        ) as socket:  # fmt: skip
            await socket.send_message(hello)
            assert json.loads(await socket.get_message())["type"] == "welcome"
            await socket.send_message(json.dumps({"type": "list_sessions", "id": 1}))
            assert json.loads(await socket.get_message())["type"] == "session_list"
        try:
            async with open_websocket(
                "127.0.0.1", port, "/", use_ssl=False,
                extra_headers=[(b"cookie", cookie.encode()), (b"origin", FOREIGN.encode())],
            ):  # fmt: skip
                raise AssertionError("a foreign Origin was admitted")
        except ConnectionRejected as rejected:
            assert rejected.status_code == 403
        for extra in ([], [(b"cookie", forged.encode())]):
            async with open_websocket("127.0.0.1", port, "/", use_ssl=False,
                                      extra_headers=extra) as socket:  # fmt: skip
                await socket.send_message(hello)
                assert json.loads(await socket.get_message())["code"] == "unauthorized"
                try:
                    await socket.get_message()
                    raise AssertionError("an unauthenticated socket stayed open")
                except ConnectionClosed as closed:
                    assert closed.reason is not None and closed.reason.code == 4001


async def test_a_fresh_login_link_is_minted_only_for_the_token(start_stack: StartStack) -> None:
    """``POST /login-link`` (what ``troupe login-link`` asks): the server's token as a
    bearer gets a new one-time link; a cookie, a wrong token, none, a foreign Origin
    or a GET get none."""
    async with start_stack() as stack:
        port = stack.server.port
        login = stack.server.login_url()
        target = login.split(str(port), 1)[1]
        status, headers, _ = await http_get(port, target)
        cookie = headers["set-cookie"].split(";", 1)[0]
        refused = [
            await http_get(port, "/login-link", method="POST"),
            await http_get(port, "/login-link", "Authorization: Bearer wrong", method="POST"),
            await http_get(port, "/login-link", f"Cookie: {cookie}", method="POST"),
            await http_get(port, "/login-link", f"Authorization: Bearer {stack.token}"),
            await http_get(port, "/login-link", f"Authorization: Bearer {stack.token}",
                           f"Origin: {FOREIGN}", method="POST"),
        ]  # fmt: skip
        assert [status for status, _, _ in refused] == [401, 401, 401, 401, 403]
        status, headers, body = await http_get(
            port, "/login-link", f"Authorization: Bearer {stack.token}", method="POST"
        )
        assert status == 200 and headers["content-type"] == "application/json"
        fresh = json.loads(body)["url"]
        assert fresh.startswith(f"http://127.0.0.1:{port}/login?token=") and fresh != login
        fresh_target = fresh.split(str(port), 1)[1]
        assert (await http_get(port, fresh_target))[0] == 303
        assert (await http_get(port, fresh_target))[0] == 401  # one time, too
        assert (await http_get(port, target))[0] == 401  # the first stays spent
