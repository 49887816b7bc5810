"""The client's WebSocket under asyncio: the ``websockets`` library, made to look like
trio-websocket to :class:`protocol.client.TroupeClient` (same methods, same errors).

Imported only when a client connects from asyncio, so trio programs never load it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from trio_websocket import (
    CloseReason,
    ConnectionClosed,
    ConnectionRejected,
    ConnectionTimeout,
    HandshakeError,
)

CONNECT_TIMEOUT = 60.0
"""As trio-websocket's default: seconds for the TCP connect and the upgrade."""


class AsyncioWebSocket:
    """Whole messages in and out, raising trio-websocket's ``ConnectionClosed``."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    @property
    def closed(self) -> CloseReason | None:
        """Why the connection closed, or None while it is open."""
        connection = self._connection
        if connection.close_code is None:
            return None
        return CloseReason(connection.close_code, connection.close_reason or None)

    async def send_message(self, message: str | bytes) -> None:
        from websockets.exceptions import ConnectionClosed as Closed

        try:
            await self._connection.send(message)
        except Closed as closed:
            raise _closed(closed) from None

    async def get_message(self) -> str | bytes:
        from websockets.exceptions import ConnectionClosed as Closed

        try:
            return await self._connection.recv()
        except Closed as closed:
            raise _closed(closed) from None

    async def aclose(self, code: int = 1000, reason: str | None = None) -> None:
        await self._connection.close(code, reason or "")


def _closed(closed: Any) -> ConnectionClosed:
    frame = closed.rcvd or closed.sent
    if frame is None:
        return ConnectionClosed(CloseReason(1006, None))  # dropped without a close frame
    return ConnectionClosed(CloseReason(frame.code, frame.reason or None))


@asynccontextmanager
async def open_asyncio_websocket(
    url: str, headers: list[tuple[bytes, bytes]], max_frame_bytes: int
) -> AsyncGenerator[AsyncioWebSocket]:
    """Connect with ``websockets``; refusals raise trio-websocket's handshake errors."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake, InvalidStatus

    try:
        connection = await connect(
            url,
            additional_headers=[(name.decode(), value.decode()) for name, value in headers],
            max_size=max_frame_bytes,
            max_queue=64,
            compression=None,
            proxy=None,
            open_timeout=CONNECT_TIMEOUT,
        )
    except InvalidStatus as refused:
        response = refused.response
        raw = tuple((name.encode(), value.encode()) for name, value in response.headers.raw_items())
        raise ConnectionRejected(response.status_code, raw, bytes(response.body)) from None
    except InvalidHandshake as error:
        raise HandshakeError(str(error)) from None
    except TimeoutError:
        raise ConnectionTimeout() from None
    try:
        yield AsyncioWebSocket(connection)
    finally:
        await connection.close()
