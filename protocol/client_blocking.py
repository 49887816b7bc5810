"""A blocking client of the Troupe protocol, without an event loop.

    client = connect(url, token)
    try:
        created = client.request(CreateSession)
        client.request(SubscribeSession, session=created.session.session_id)
        ...
        event = client.next_event()
    finally:
        client.close()

The same frames as :mod:`protocol.client` (JSON encoding), over
:mod:`protocol.websocket_blocking`; meant for a command that sends a few
requests and follows one session, where importing trio and a WebSocket library
would cost more than the whole exchange. Events that arrive while a request
waits for its reply are kept, in order, for :meth:`BlockingClient.next_event`.
Errors are those of :mod:`protocol.client_errors`; the connection's end is
:class:`~protocol.websocket_blocking.Closed`.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, cast

from protocol.asks import Asks
from protocol.client_errors import ConnectionRefused, RequestError
from protocol.websocket_blocking import BlockingWebSocket, open_websocket
from protocol.wire import (
    PROTOCOL_VERSION,
    ErrorReply,
    Event,
    Hello,
    Request,
    ServerDecoder,
    Welcome,
    encode_client,
)

R = TypeVar("R")


class BlockingClient:
    """One connection; use :func:`connect`."""

    def __init__(self, websocket: BlockingWebSocket, welcome: Welcome) -> None:
        self.websocket = websocket
        self.welcome = welcome
        self._decoder = ServerDecoder("json")
        self._ids = itertools.count(1)
        self._events: deque[Event] = deque()
        self.errors: list[ErrorReply] = []
        """Error frames without a request id (a frame the server could not read)."""

    def request(self, kind: type[Asks[R]], /, *, timeout: float | None = None, **fields: Any) -> R:
        """Send ``kind(id=..., **fields)`` and return its reply; ``TimeoutError``
        when none came within ``timeout`` seconds."""
        request_id = next(self._ids)
        request = cast(Callable[..., object], kind)(id=request_id, **fields)
        if not isinstance(request, Request):
            raise TypeError(f"{kind.__name__} is not a request of this protocol")
        self.websocket.send(encode_client(request, "json"))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            frame = self._frame(left)
            if isinstance(frame, Event):
                self._events.append(frame)
            elif getattr(frame, "id", None) == request_id:
                if isinstance(frame, ErrorReply):
                    raise RequestError(frame)
                return cast(R, frame)

    def next_event(self, timeout: float | None = None) -> Event:
        """The next event of any subscription (``TimeoutError`` after ``timeout``)."""
        while not self._events:
            frame = self._frame(timeout)
            if isinstance(frame, Event):
                return frame
        return self._events.popleft()

    def close(self) -> None:
        self.websocket.close()

    def _frame(self, timeout: float | None) -> object:
        frame = self._decoder.decode(self.websocket.receive(timeout))
        if isinstance(frame, ErrorReply) and frame.id is None:
            self.errors.append(frame)
        return frame


def connect(
    url: str,
    token: str | None,
    *,
    client: str = "troupe-python",
    timeout: float = 30.0,
    wake: int | None = None,
    max_frame_bytes: int = 16 * 1024 * 1024,
) -> BlockingClient:
    """Connect, send the token as ``Authorization: Bearer``, say hello.

    ``OSError`` when nothing answers, ``Rejected`` for a refused upgrade,
    :class:`ConnectionRefused` for a refused hello. ``wake``: see
    :mod:`protocol.websocket_blocking`."""
    headers = [("Authorization", f"Bearer {token}")] if token else []
    websocket = open_websocket(
        url, headers, max_message=max_frame_bytes, timeout=timeout, wake=wake
    )
    try:
        hello = Hello(PROTOCOL_VERSION, encoding="json", client=client)
        websocket.send(encode_client(hello, "json"))
        frame = ServerDecoder("json").decode(websocket.receive(timeout))
        if isinstance(frame, ErrorReply):
            raise ConnectionRefused(frame.code, frame.message)
        if not isinstance(frame, Welcome):
            raise ConnectionRefused("bad_frame", f"expected welcome, got {type(frame).__name__}")
    except BaseException:
        websocket.close()
        raise
    return BlockingClient(websocket, frame)
