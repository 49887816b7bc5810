"""The gateway: one actor per WebSocket connection.

The actor reads frames, answers each request in a task of its own (so a long
``exec`` does not hold up a ``steer``), and writes everything through one bounded
outbox, bounded in bytes. Nothing the connection does can slow a session: each
subscription reads the session's events from its own bounded buffer (a lagging one
is refilled from the store).

A client is judged on throughput over a window, not per frame: once the outbox is
full, it must drain half of it within ``slow_timeout`` seconds. One that does not
is disconnected with close code 4008 (it resumes with ``after_seq``): the queued
frames are dropped at once (their memory returned) and the close frame goes out
right after the frame already on the wire, never behind the queue. When the
connection ends, the actor stops; the sessions it talked to keep running.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection

from actors.kernel import Actor, handler
from actors.server.dispatch import Services, answer, error_reply
from actors.server.subscription import SessionSubscription
from protocol.asks import Asks
from protocol.wire import (
    CLOSE_SHUTTING_DOWN,
    CLOSE_TOO_SLOW,
    Codec,
    ErrorReply,
    FrameError,
    Hello,
    Ok,
    Request,
    SubscribeSession,
    UnsubscribeSession,
)
from protocol.wire_requests import RequestId

log = logging.getLogger("troupe.server")

MAX_IN_FLIGHT = 64
"""Requests a connection may have running at once; the reader waits beyond it."""
CLOSE_GRACE = 2.0
SLOW_CLOSE_GRACE = 30.0
"""How long a client judged too slow has to read the frame on the wire and the close."""


class Disconnect(msgspec.Struct, frozen=True):
    """Close this connection (the server is stopping, or an operator asked)."""

    code: int = CLOSE_SHUTTING_DOWN
    reason: str = "server shutting down"


class ConnectionStats(msgspec.Struct, frozen=True):
    frames_in: int
    frames_out: int
    subscriptions: list[str]


class GetConnectionStats(msgspec.Struct, Asks[ConnectionStats], frozen=True):
    pass


class Connection(Actor):
    """One client; its address is ``/connections/c-N``."""

    mailbox_size = 16

    def __init__(
        self,
        websocket: WebSocketConnection,
        codec: Codec,
        services: Services,
        outbox_bytes: int,
        slow_timeout: float,
    ) -> None:
        self.slow_timeout = slow_timeout
        self.websocket = websocket
        self.codec = codec
        self.services = services
        self.outbox_bytes = outbox_bytes
        self._outbox: deque[str | bytes] = deque()
        self._queued_bytes = 0
        self._queued = trio.Event()
        self._drained = trio.Event()
        self._writer_done = trio.Event()
        self._sending = False
        self.peak_queued_bytes = 0
        self._subscriptions: dict[str, trio.CancelScope] = {}
        self._in_flight = trio.Semaphore(MAX_IN_FLIGHT)
        self._closing = False
        self.frames_in = 0
        self.frames_out = 0

    async def on_start(self) -> None:
        self.ctx.nursery.start_soon(self._writer)
        self.ctx.nursery.start_soon(self._reader)

    async def on_stop(self) -> None:
        await self._close(CLOSE_SHUTTING_DOWN, "server shutting down")

    @handler
    async def disconnect(self, message: Disconnect) -> None:
        await self._close(message.code, message.reason)

    @handler
    async def stats(self, message: GetConnectionStats) -> ConnectionStats:
        return ConnectionStats(self.frames_in, self.frames_out, sorted(self._subscriptions))

    # -- outbound ------------------------------------------------------------

    async def send(self, frame: Any) -> None:
        """Queue a frame. While the outbox is over its byte budget the sender waits;
        a client that does not drain half of it within ``slow_timeout`` seconds is
        disconnected (4008). Only this connection's tasks wait here: sessions hand
        events over without waiting (see :mod:`.subscription`)."""
        if self._closing:
            return
        data = self.codec.encode(frame)
        if self._queued_bytes + len(data) > self.outbox_bytes and self._outbox:
            with trio.move_on_after(self.slow_timeout):
                while self._queued_bytes > self.outbox_bytes // 2 and not self._closing:
                    await self._drained.wait()
                self._enqueue(data)
                return
            reason = "outbound queue full: client too slow; resubscribe with after_seq"
            self.ctx.nursery.start_soon(self._close, CLOSE_TOO_SLOW, reason)
            await trio.sleep_forever()  # cancelled by the close
        self._enqueue(data)

    async def catch_up(self) -> None:
        """A subscription of this client lost live events (the session outran it). If
        the client is behind unless, within ``slow_timeout`` seconds, it drains what is
        queued and answers a ping (so it has read what the socket buffers held);
        otherwise it is disconnected (4008)."""
        if self._closing:
            return
        with trio.move_on_after(self.slow_timeout):
            while (self._outbox or self._sending) and not self._closing:
                await self._drained.wait()
            try:  # the pong comes back only once the client has read what is in flight
                await self.websocket.ping()
            except ConnectionClosed:
                return
            return
        reason = "fell behind the session: client too slow; resubscribe with after_seq"
        self.ctx.nursery.start_soon(self._close, CLOSE_TOO_SLOW, reason)
        await trio.sleep_forever()  # cancelled by the close

    def _enqueue(self, data: str | bytes) -> None:
        if self._closing:
            return
        self._outbox.append(data)
        self._queued_bytes += len(data)
        self.peak_queued_bytes = max(self.peak_queued_bytes, self._queued_bytes)
        self._queued.set()

    async def _writer(self) -> None:
        try:
            while True:
                while not self._outbox:
                    if self._closing:
                        return
                    self._queued = trio.Event()
                    await self._queued.wait()
                data = self._outbox.popleft()
                self._queued_bytes -= len(data)
                self._wake_drained()
                self._sending = True
                await self.websocket.send_message(data)
                self._sending = False
                self.frames_out += 1
                if not self._outbox:
                    self._wake_drained()
        except ConnectionClosed:
            self._end()
        finally:
            self._writer_done.set()

    def _wake_drained(self) -> None:
        """Wake the senders waiting for room (they check what they wait for)."""
        if self._queued_bytes <= self.outbox_bytes // 2:
            drained, self._drained = self._drained, trio.Event()
            drained.set()

    async def _close(self, code: int, reason: str) -> None:
        """Drop what is queued, then close: the close frame follows the frame already
        on the wire (if any), not the queue."""
        if self._closing:
            return
        self._closing = True
        self._outbox.clear()
        self._queued_bytes = 0
        self._drained.set()
        self._queued.set()
        for scope in self._subscriptions.values():
            scope.cancel()
        grace = SLOW_CLOSE_GRACE if code == CLOSE_TOO_SLOW else CLOSE_GRACE
        with trio.move_on_after(grace):  # the frame on the wire, never cut in half
            await self._writer_done.wait()
        with trio.move_on_after(CLOSE_GRACE):
            await self.websocket.aclose(code, reason)
        self._end()

    def _end(self) -> None:
        self._closing = True
        self.ctx.nursery.cancel_scope.cancel()
        self.ctx.stop_self()

    # -- inbound -------------------------------------------------------------

    async def _reader(self) -> None:
        try:
            while True:
                message = await self.websocket.get_message()
                self.frames_in += 1
                try:
                    frame = self.codec.decode(message)
                except FrameError as error:
                    await self.send(ErrorReply(error.request_id, error.code, str(error)))
                    continue
                if isinstance(frame, Hello):
                    await self.send(ErrorReply(None, "bad_frame", "hello was already received"))
                    continue
                await self._in_flight.acquire()
                self.ctx.nursery.start_soon(self._handle, frame)
        except ConnectionClosed:
            self._end()

    async def _handle(self, request: Request) -> None:
        try:
            if isinstance(request, SubscribeSession):
                await self._subscribe(request)
            elif isinstance(request, UnsubscribeSession):
                scope = self._subscriptions.pop(request.session, None)
                if scope is not None:
                    scope.cancel()
                await self.send(Ok(request.id))
            else:
                await self.send(await answer(self.services, request))
        finally:
            self._in_flight.release()

    async def _subscribe(self, request: SubscribeSession) -> None:
        """Start the forwarder; its errors before the ``subscribed`` frame are replied."""
        old = self._subscriptions.pop(request.session, None)
        if old is not None:
            old.cancel()
        subscription = SessionSubscription(
            self.services.registry,
            self.services.store,
            request.session,
            request.after_seq,
            self.send,
            self.catch_up,
        )
        try:
            scope = await self.ctx.nursery.start(self._forward, subscription, request.id)
        except Exception as error:
            await self.send(error_reply(request.id, error))
            return
        self._subscriptions[request.session] = scope

    async def _forward(
        self,
        subscription: SessionSubscription,
        request_id: RequestId,
        *,
        task_status: trio.TaskStatus[trio.CancelScope] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        with trio.CancelScope() as scope:
            await subscription.open()
            task_status.started(scope)
            try:
                await subscription.run(request_id)
            except Exception:
                log.exception("subscription to %s failed", subscription.session)
        if self._subscriptions.get(subscription.session) is scope:
            del self._subscriptions[subscription.session]
