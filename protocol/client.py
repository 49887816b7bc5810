"""A Python client for the Troupe WebSocket protocol, for trio and asyncio programs.

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

The client is written on anyio, so the same code runs under ``trio.run`` and under
``asyncio.run`` (FastAPI, aiohttp, ...). The WebSocket underneath is trio-websocket
on trio and ``websockets`` on asyncio; either way a closed connection raises
:class:`ConnectionClosed` (trio-websocket's, re-exported here) and a server that
refuses the upgrade raises ``trio_websocket.ConnectionRejected`` with its HTTP status.
An error inside the ``connect`` block leaves it as itself, not in an ExceptionGroup.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import anyio
import sniffio
import trio

from protocol.asks import Asks
from protocol.client_errors import ConnectionRefused, RequestError
from protocol.wire import (
    PROTOCOL_VERSION,
    ClientCall,
    ClientCallCancel,
    ClientCallError,
    ClientCallResult,
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

if TYPE_CHECKING:
    from trio_websocket import ConnectionClosed

R = TypeVar("R")
EVENT_QUEUE = 65_536
CALL_QUEUE = 1_024

__all__ = [
    "ConnectionClosed",
    "ConnectionRefused",
    "EndOfEvents",
    "RequestError",
    "TroupeClient",
    "connect",
]


class MessageSocket(Protocol):
    """What the client needs of a WebSocket: whole messages in and out."""

    async def send_message(self, message: str | bytes) -> None: ...

    async def get_message(self) -> str | bytes: ...


class EndOfEvents(trio.EndOfChannel, anyio.EndOfStream):
    """No more events: the connection has ended. Caught as ``trio.EndOfChannel`` (as
    before the client ran on asyncio too) or as ``anyio.EndOfStream``."""


class _Slot:
    __slots__ = ("done", "frame")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.frame: Reply | ErrorReply | None = None


class TroupeClient:
    """One connection; use :func:`connect`."""

    def __init__(self, websocket: MessageSocket, encoding: Encoding, welcome: Welcome):
        self.websocket = websocket
        self.encoding: Encoding = encoding
        self.welcome = welcome
        self._decoder = ServerDecoder(encoding)
        self._ids = itertools.count(1)
        self._waiting: dict[int | str, _Slot] = {}
        self._send_events, self._receive_events = anyio.create_memory_object_stream[Event](
            EVENT_QUEUE
        )
        calls = anyio.create_memory_object_stream[ClientCall | ClientCallCancel](CALL_QUEUE)
        self._send_calls, self._receive_calls = calls
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
            from trio_websocket import ConnectionClosed

            raise ConnectionClosed(self.closed.reason if self.closed else None)  # type: ignore[arg-type]
        return cast(R, slot.frame)

    async def events(self) -> AsyncIterator[Event]:
        """Every event of every subscription, in arrival order, until disconnected."""
        async for event in self._receive_events:
            yield event

    async def next_event(self) -> Event:
        """The next event; :class:`EndOfEvents` once disconnected."""
        try:
            return await self._receive_events.receive()
        except anyio.EndOfStream:
            raise EndOfEvents from None

    async def calls(self) -> AsyncIterator[ClientCall | ClientCallCancel]:
        """The ``client_call`` frames for the sessions this client created with
        ``client_operations``, in arrival order; answer each with :meth:`answer_call`.
        A ``client_call_cancel`` says the server gave up on a call: stop its work."""
        async for call in self._receive_calls:
            yield call

    async def answer_call(
        self,
        call_id: int,
        result: dict[str, Any] | None = None,
        error: ClientCallError | None = None,
    ) -> None:
        """Send the ``client_call_result`` for ``call_id`` (a result, or an error)."""
        answer = ClientCallResult(call_id, result=None if error else (result or {}), error=error)
        await self.websocket.send_message(encode_client(answer, self.encoding))

    async def read_frames(self) -> None:
        """The reader task: routes replies to their requests and events to the queue."""
        from trio_websocket import ConnectionClosed

        try:
            while True:
                frame = self._decoder.decode(await self.websocket.get_message())
                if isinstance(frame, Event):
                    await self._send_events.send(frame)
                elif isinstance(frame, ClientCall | ClientCallCancel):
                    await self._send_calls.send(frame)
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
            self._send_calls.close()
            for slot in self._waiting.values():
                slot.done.set()


async def _handshake(
    websocket: MessageSocket, token: str | None, encoding: Encoding, client: str
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
    async with _open_websocket(url, headers, max_frame_bytes) as websocket:
        welcome = await _handshake(websocket, None if header_token else token, encoding, client)
        troupe = TroupeClient(websocket, encoding, welcome)
        single: BaseException | None = None
        try:
            async with anyio.create_task_group() as readers:
                readers.start_soon(troupe.read_frames)
                try:
                    yield troupe
                finally:
                    readers.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            single = _single(group)
            if single is group:
                raise
        if single is not None:  # raised outside the handler: no group as its context
            raise single


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one error a group holds (the caller's own), or the group if it holds more."""
    current = group
    while len(current.exceptions) == 1:
        only = current.exceptions[0]
        if not isinstance(only, BaseExceptionGroup):
            return only
        current = cast("BaseExceptionGroup[BaseException]", only)
    return current


def _open_websocket(url: str, headers: list[tuple[bytes, bytes]], max_frame_bytes: int) -> Any:
    """trio-websocket under trio (as ever), ``websockets`` under asyncio."""
    if sniffio.current_async_library() == "trio":
        from trio_websocket import open_websocket_url

        return open_websocket_url(
            url, extra_headers=headers, max_message_size=max_frame_bytes, message_queue_size=64
        )
    from protocol.client_asyncio import open_asyncio_websocket

    return open_asyncio_websocket(url, headers, max_frame_bytes)


def __getattr__(name: str) -> Any:
    """``ConnectionClosed`` (trio-websocket's), imported when first asked for: a
    program that never opens a connection does not load the WebSocket stack."""
    if name == "ConnectionClosed":
        from trio_websocket import ConnectionClosed

        return ConnectionClosed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
