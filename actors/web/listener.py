"""One TCP listener for two protocols: WebSocket upgrades and plain HTTP GETs.

trio-websocket answers anything that is not an upgrade with an empty 400, so the
listener reads the request head itself first. An upgrade is handed to trio-websocket
with the bytes already read replayed in front of the stream; anything else goes to
the web page's HTTP handler. One port means one URL to print, one Origin to check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from actors.access.peers import Peer

if TYPE_CHECKING:
    from trio_websocket import WebSocketRequest

MAX_HEAD_BYTES = 64 * 1024

HttpHandler = Callable[[trio.abc.Stream, bytes], Awaitable[None]]
WebSocketHandler = Callable[["WebSocketRequest", Peer | None], Awaitable[None]]


class ReplayStream(trio.abc.Stream):
    """A stream that first yields bytes already read from it."""

    def __init__(self, prefix: bytes, stream: trio.abc.Stream) -> None:
        self._prefix = prefix
        self._stream = stream

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._prefix:
            size = len(self._prefix) if max_bytes is None else max_bytes
            data, self._prefix = self._prefix[:size], self._prefix[size:]
            return data
        return bytes(await self._stream.receive_some(max_bytes))

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self._stream.aclose()


def is_upgrade(head: bytes) -> bool:
    """Whether a request head asks for a WebSocket (``Upgrade: websocket``)."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"upgrade" and b"websocket" in value.lower():
            return True
    return False


async def read_head(stream: trio.abc.Stream) -> bytes:
    """Bytes up to and including the blank line ending the request head (and any
    that arrived with it); empty if the peer closed or sent too much."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD_BYTES:
            return b""
        chunk = await stream.receive_some(16384)
        if not chunk:
            return b""
        data += chunk
    return data


def peer_of(stream: trio.abc.Stream) -> Peer | None:
    """The connection's two ends, for :mod:`actors.access.peers` (None off TCP)."""
    if not isinstance(stream, trio.SocketStream):
        return None
    try:
        local, remote = stream.socket.getsockname(), stream.socket.getpeername()
    except OSError:
        return None
    if not isinstance(local, tuple) or not isinstance(remote, tuple):
        return None
    return Peer((str(local[0]), int(local[1])), (str(remote[0]), int(remote[1])))


class DualListener:
    """Serves WebSocket upgrades and HTTP requests on one port."""

    def __init__(
        self,
        websocket: WebSocketHandler,
        http: HttpHandler,
        *,
        max_message_size: int,
        message_queue_size: int,
        connect_timeout: float,
        disconnect_timeout: float,
    ) -> None:
        self._websocket = websocket
        self._http = http
        self._max_message_size = max_message_size
        self._message_queue_size = message_queue_size
        self._connect_timeout = connect_timeout
        self._disconnect_timeout = disconnect_timeout

    async def serve(
        self,
        host: str,
        port: int,
        *,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        await trio.serve_tcp(self.handle, port, host=host, task_status=task_status)

    async def handle(self, stream: trio.SocketStream) -> None:
        try:
            head = b""
            with trio.move_on_after(self._connect_timeout):
                head = await read_head(stream)
            if not head:
                return
            if is_upgrade(head):
                await self._serve_websocket(ReplayStream(head, stream), peer_of(stream))
            else:
                await self._http(stream, head)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            with trio.move_on_after(1) as cleanup:
                cleanup.shield = True
                await stream.aclose()

    async def _serve_websocket(self, stream: ReplayStream, peer: Peer | None) -> None:
        # The WebSocket stack (trio-websocket, wsproto, h11 and the package metadata
        # trio-websocket reads at import) comes with the first upgrade: a server is
        # listening, and serving pages and readiness checks, without it (issue #36).
        from trio_websocket import wrap_server_stream

        async with trio.open_nursery() as nursery:
            request = None
            with trio.move_on_after(self._connect_timeout):
                request = await wrap_server_stream(
                    nursery,
                    stream,
                    message_queue_size=self._message_queue_size,
                    max_message_size=self._max_message_size,
                )
            if request is None:
                nursery.cancel_scope.cancel()
                return
            connection = request._connection  # closed below, like serve_websocket does
            try:
                await self._websocket(request, peer)
            finally:
                with trio.move_on_after(self._disconnect_timeout):
                    await connection.aclose()
                nursery.cancel_scope.cancel()
