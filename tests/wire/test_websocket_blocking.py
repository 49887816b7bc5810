"""The blocking WebSocket client (:mod:`protocol.websocket_blocking`) against a real
WebSocket server (trio-websocket, the library the Troupe server runs on): messages
of each length encoding both ways, a ping answered, a refused upgrade with its
status and body, a close with its code and reason, a wake-up that loses nothing."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import pytest
import trio
from trio_websocket import WebSocketRequest, serve_websocket

from protocol.websocket_blocking import Closed, Rejected, Woken, open_websocket

HANG_GUARD = 30
SIZES = (0, 5, 125, 126, 65_535, 65_536, 300_000)
"""Each of the frame header's length encodings, and their edges."""

Handler = Callable[[WebSocketRequest], Awaitable[None]]


async def _with_server(handler: Handler, client: Callable[[str], object]) -> object:
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_websocket, handler, "127.0.0.1", 0, None)
        url = f"ws://127.0.0.1:{server.port}/"
        with trio.fail_after(HANG_GUARD):
            result = await trio.to_thread.run_sync(client, url)
        nursery.cancel_scope.cancel()
    return result


async def test_messages_of_every_length_both_ways_and_a_ping() -> None:
    async def echo(request: WebSocketRequest) -> None:
        ws = await request.accept()
        await ws.ping(b"are you there")  # returns once the client's pong came back
        await ws.send_message("ponged")
        for _ in range(len(SIZES) * 2):
            await ws.send_message(await ws.get_message())

    def client(url: str) -> list[bool]:
        websocket = open_websocket(url)
        same = [websocket.receive(10) == "ponged"]  # the ping came first, and was answered
        for size in SIZES:
            text, data = "é" * (size // 2), os.urandom(size)
            websocket.send(text)
            websocket.send(data)
            same += [websocket.receive(10) == text, websocket.receive(10) == data]
        websocket.close()
        return same

    assert await _with_server(echo, client) == [True] * (1 + len(SIZES) * 2)


async def test_a_refused_upgrade_keeps_its_status_and_body() -> None:
    async def refuse(request: WebSocketRequest) -> None:
        await request.reject(401, body=b"no token\n")

    def client(url: str) -> tuple[int, bytes]:
        with pytest.raises(Rejected) as refused:
            open_websocket(url)
        return refused.value.status_code, refused.value.body

    assert await _with_server(refuse, client) == (401, b"no token\n")


async def test_a_close_says_its_code_and_reason() -> None:
    async def goodbye(request: WebSocketRequest) -> None:
        ws = await request.accept()
        await ws.send_message("last words")
        await ws.aclose(4009, "shutting down")

    def client(url: str) -> tuple[str, int | None, str]:
        websocket = open_websocket(url)
        first = websocket.receive(10)
        with pytest.raises(Closed) as closed:
            websocket.receive(10)
        return str(first), closed.value.code, closed.value.reason

    assert await _with_server(goodbye, client) == ("last words", 4009, "shutting down")


async def test_a_wake_up_or_a_timeout_loses_no_part_of_a_message() -> None:
    """A wait ended by its timeout or by the wake-up descriptor leaves the
    connection as it was: the message sent after comes whole (200 kB: several
    reads)."""

    async def slow(request: WebSocketRequest) -> None:
        ws = await request.accept()
        await ws.get_message()  # the client is ready
        await ws.send_message("x" * 200_000)
        await ws.get_message()

    def client(url: str) -> list[str]:
        reader, writer = os.pipe()
        websocket = open_websocket(url, wake=reader)
        seen = []
        with pytest.raises(TimeoutError):
            websocket.receive(0.01)
        os.write(writer, b"!")
        with pytest.raises(Woken):
            websocket.receive(10)
        os.read(reader, 1)
        websocket.send("ready")
        seen.append(websocket.receive(10))
        websocket.send("bye")
        websocket.close()
        os.close(reader)
        os.close(writer)
        return [str(len(m)) for m in seen]

    assert await _with_server(slow, client) == ["200000"]


async def test_an_upgrade_answered_with_the_wrong_accept_key_is_refused() -> None:
    """RFC 6455 4.1: a client fails the connection when the server's
    Sec-WebSocket-Accept is not the SHA-1 of its own key (a server that did not
    read the key, or a proxy answering for it)."""

    async def wrong_accept(stream: trio.SocketStream) -> None:
        received = b""
        while b"\r\n\r\n" not in received:
            received += await stream.receive_some()
        await stream.send_all(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        )

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(trio.serve_tcp, wrong_accept, 0)
        port = listeners[0].socket.getsockname()[1]
        with trio.fail_after(HANG_GUARD), pytest.raises(Rejected) as refused:
            await trio.to_thread.run_sync(open_websocket, f"ws://127.0.0.1:{port}/")
        nursery.cancel_scope.cancel()
    assert b"Sec-WebSocket-Accept does not match" in refused.value.body
