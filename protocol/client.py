"""A Python client for the Troupe WebSocket protocol, on trio-websocket.

    async with connect(url, token) as client:
        created = await client.request(CreateSession)
        session = created.session.session_id
        await client.request(SubscribeSession, session=session)
        await client.request(SubmitInput, session=session, text="Fix the test")
        async for event in client.events():
            ...

Requests are numbered by the client; ``request`` returns the reply frame or raises
:class:`RequestError` with the server's error code. Events arrive in order on
:meth:`TroupeClient.events`.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

import trio
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    open_websocket_url,
)

from protocol.asks import Asks
from protocol.wire import (
    PROTOCOL_VERSION,
    Encoding,
    ErrorReply,
    Event,
    Hello,
    Reply,
    Request,
    ServerDecoder,
    Welcome,
    encode_client,
)

R = TypeVar("R")
EVENT_QUEUE = 65_536


class RequestError(Exception):
    """The server answered a request with an ``error`` frame."""

    def __init__(self, error: ErrorReply) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.error = error


class ConnectionRefused(Exception):
    """The server refused the connection (bad token, origin, version)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class _Slot:
    __slots__ = ("done", "frame")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.frame: Reply | ErrorReply | None = None


class TroupeClient:
    """One connection; use :func:`connect`."""

    def __init__(self, websocket: WebSocketConnection, encoding: Encoding, welcome: Welcome):
        self.websocket = websocket
        self.encoding: Encoding = encoding
        self.welcome = welcome
        self._decoder = ServerDecoder(encoding)
        self._ids = itertools.count(1)
        self._waiting: dict[int | str, _Slot] = {}
        self._send_events, self._receive_events = trio.open_memory_channel[Event](EVENT_QUEUE)
        self.errors: list[ErrorReply] = []
        """Error frames without a request id (a frame the server could not read)."""
        self.closed: ConnectionClosed | None = None

    async def request(self, kind: type[Asks[R]], /, **fields: Any) -> R:
        """Send ``kind(id=..., **fields)`` and return its reply (the type the request
        declares, e.g. ``SessionCreated`` for ``CreateSession``)."""
        request_id = next(self._ids)
        slot = _Slot()
        self._waiting[request_id] = slot
        make = cast(Callable[..., object], kind)
        request = make(id=request_id, **fields)
        if not isinstance(request, Request):
            raise TypeError(f"{kind.__name__} is not a request of this protocol")
        try:
            await self.websocket.send_message(encode_client(request, self.encoding))
            await slot.done.wait()
        finally:
            self._waiting.pop(request_id, None)
        if isinstance(slot.frame, ErrorReply):
            raise RequestError(slot.frame)
        if slot.frame is None:
            raise ConnectionClosed(self.closed.reason if self.closed else None)
        return cast(R, slot.frame)

    async def events(self) -> AsyncIterator[Event]:
        """Every event of every subscription, in arrival order, until disconnected."""
        async for event in self._receive_events:
            yield event

    async def next_event(self) -> Event:
        return await self._receive_events.receive()

    async def read_frames(self) -> None:
        """The reader task: routes replies to their requests and events to the queue."""
        try:
            while True:
                frame = self._decoder.decode(await self.websocket.get_message())
                if isinstance(frame, Event):
                    await self._send_events.send(frame)
                elif isinstance(frame, ErrorReply) and frame.id is None:
                    self.errors.append(frame)
                else:
                    slot = self._waiting.get(frame.id)  # type: ignore[union-attr]
                    if slot is not None:
                        slot.frame = frame  # type: ignore[assignment]
                        slot.done.set()
        except ConnectionClosed as closed:
            self.closed = closed
        finally:
            self._send_events.close()
            for slot in self._waiting.values():
                slot.done.set()


async def _handshake(
    websocket: WebSocketConnection, token: str | None, encoding: Encoding, client: str
) -> Welcome:
    hello = Hello(PROTOCOL_VERSION, token=token, encoding=encoding, client=client)
    await websocket.send_message(encode_client(hello, "json"))
    frame = ServerDecoder("json").decode(await websocket.get_message())
    if isinstance(frame, ErrorReply):
        raise ConnectionRefused(frame.code, frame.message)
    if not isinstance(frame, Welcome):
        raise ConnectionRefused("bad_frame", f"expected welcome, got {type(frame).__name__}")
    return frame


@asynccontextmanager
async def connect(
    url: str,
    token: str | None,
    *,
    encoding: Encoding = "json",
    header_token: bool = True,
    client: str = "troupe-python",
    max_frame_bytes: int = 16 * 1024 * 1024,
) -> AsyncGenerator[TroupeClient]:
    """Connect, say hello, and run the reader until the block ends.

    ``header_token`` sends the token as ``Authorization: Bearer``; otherwise it
    goes in the hello frame (as a browser must)."""
    headers = [(b"authorization", f"Bearer {token}".encode())] if token and header_token else []
    async with open_websocket_url(
        url, extra_headers=headers, max_message_size=max_frame_bytes, message_queue_size=64
    ) as websocket:
        welcome = await _handshake(websocket, None if header_token else token, encoding, client)
        troupe = TroupeClient(websocket, encoding, welcome)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(troupe.read_frames)
            try:
                yield troupe
            finally:
                nursery.cancel_scope.cancel()
