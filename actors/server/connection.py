"""The gateway: one actor per WebSocket connection.

The actor reads frames, answers each request in a task of its own (so a long
``exec`` does not hold up a ``steer``), and writes everything through one bounded
outbox, bounded in bytes. Nothing the connection does can slow a session: each
subscription reads the session's events from its own bounded buffer (a lagging one
is refilled from the store).

A client is judged on throughput over a window, not per frame: once the outbox is
full, it must drain half of it within ``slow_timeout`` seconds; and a frame may not
sit on the wire longer than ``slow_timeout`` plus what it needs at
:data:`MIN_DRAIN_RATE` (so a client that stops reading is judged even when nothing
more is queued for it). One that fails either is disconnected with close code
4008 (it resumes with ``after_seq``): the queued frames are dropped at once
(their memory returned) and the close frame goes out right after the frame
already on the wire, never behind the queue. When the
connection ends, the actor stops; the sessions it talked to keep running.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection

from actors.access.peers import Peer
from actors.kernel import Actor, handler
from actors.server.client_calls import DEFAULT_CALL_TIMEOUT, PendingCalls, ServeOnClient
from actors.server.dispatch import Services, answer, error_reply
from actors.server.subscription import SessionSubscription, subscription_key
from actors.server.validation import InvalidRequest, validate
from protocol.asks import Asks
from protocol.wire import (
    CLOSE_SHUTTING_DOWN,
    CLOSE_TOO_SLOW,
    ClientCallResult,
    Codec,
    CreateSession,
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
MIN_DRAIN_RATE = 64 << 10
"""Bytes per second a client is granted, beyond ``slow_timeout``, to take one frame."""
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


@dataclass(frozen=True)
class Running:
    """A live subscription: its cancel scope, and an event set once it has ended."""

    scope: trio.CancelScope
    done: trio.Event


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
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        peer: Peer | None = None,
    ) -> None:
        """``peer``: the TCP ends, to tell whether a session's own command is the
        client (see :mod:`actors.access.peers`)."""
        self.peer = peer
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
        self._frames_started = 0
        self._send_deadline = 0.0
        self._send_started = trio.Event()
        self.peak_queued_bytes = 0
        self._subscriptions: dict[str, Running] = {}
        """By :func:`subscription_key`: at most one per session."""
        self._subscription_locks: dict[str, trio.Lock] = {}
        self._in_flight = trio.Semaphore(MAX_IN_FLIGHT)
        self._closing = False
        self.frames_in = 0
        self.frames_out = 0
        self.calls = PendingCalls(call_timeout)
        """Operations this client serves for its sessions, awaiting its results."""

    async def on_start(self) -> None:
        self.ctx.nursery.start_soon(self._writer)
        self.ctx.nursery.start_soon(self._watch_writer)
        self.ctx.nursery.start_soon(self._reader)

    async def on_stop(self) -> None:
        await self._close(CLOSE_SHUTTING_DOWN, "server shutting down")

    @handler
    async def disconnect(self, message: Disconnect) -> None:
        await self._close(message.code, message.reason)

    @handler(ServeOnClient, concurrent=True)
    async def serve_on_client(self, message: ServeOnClient) -> dict[str, Any]:
        return await self.calls.call(self.send, message)

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
        try:
            data = self.codec.encode(frame)
        except (OverflowError, TypeError, ValueError, msgspec.EncodeError) as error:
            # A value this encoding cannot carry (stored before the decoder's
            # checks existed): fail this frame, never the connection.
            log.error("cannot encode a %s frame: %s", type(frame).__name__, error)
            request_id = getattr(frame, "id", None)
            if request_id is None:
                return
            text = f"the reply cannot be sent in {self.codec.encoding}: {error}"
            data = self.codec.encode(ErrorReply(request_id, "internal", text))
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
                self._frames_started += 1
                self._send_deadline = (
                    trio.current_time() + self.slow_timeout + len(data) / MIN_DRAIN_RATE
                )
                self._sending = True
                self._send_started.set()
                await self.websocket.send_message(data)
                self._sending = False
                self.frames_out += 1
                if not self._outbox:
                    self._wake_drained()
        except ConnectionClosed:
            self._end()
        finally:
            self._writer_done.set()

    async def _watch_writer(self) -> None:
        """Judge a client whose socket has taken nothing for too long: the frame the
        writer is sending is still on the wire at its deadline. Sleeps while the
        connection is idle; wakes at most once per deadline while it is busy."""
        while not self._closing:
            if not self._sending:
                self._send_started = trio.Event()
                await self._send_started.wait()
                continue
            frame, deadline = self._frames_started, self._send_deadline
            await trio.sleep_until(deadline)
            if self._sending and self._frames_started == frame and not self._closing:
                reason = "stopped reading: client too slow; resubscribe with after_seq"
                self.ctx.nursery.start_soon(self._close, CLOSE_TOO_SLOW, reason)
                return

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
        self.calls.close()
        self._outbox.clear()
        self._queued_bytes = 0
        self._drained.set()
        self._queued.set()
        for running in self._subscriptions.values():
            running.scope.cancel()
        grace = SLOW_CLOSE_GRACE if code == CLOSE_TOO_SLOW else CLOSE_GRACE
        with trio.move_on_after(grace):  # the frame on the wire, never cut in half
            await self._writer_done.wait()
        with trio.move_on_after(CLOSE_GRACE):
            await self.websocket.aclose(code, reason)
        self._end()

    def _end(self) -> None:
        self._closing = True
        self.calls.close()
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
                if isinstance(frame, ClientCallResult):
                    if not self.calls.deliver(frame):
                        log.info("client_call_result %s answers no waiting call", frame.id)
                    continue
                await self._in_flight.acquire()
                self.ctx.nursery.start_soon(self._handle, frame)
        except ConnectionClosed:
            self._end()

    async def _handle(self, request: Request) -> None:
        try:
            try:
                validate(request)
            except InvalidRequest as refused:
                await self.send(error_reply(request.id, refused))
                return
            if isinstance(request, SubscribeSession | UnsubscribeSession):
                await self.services.registry.load(request.session)  # known before its key
            if isinstance(request, SubscribeSession):
                await self._subscribe(request)
            elif isinstance(request, UnsubscribeSession):
                await self._unsubscribe(request)
            elif isinstance(request, CreateSession) and request.client_operations:
                await self.send(await answer(self.services, request, serving=self.ctx.ref))
            else:
                await self.send(await answer(self.services, request, peer=self.peer))
        finally:
            self._in_flight.release()

    def _key(self, session: str) -> str:
        """One key per session however it is named (``s-x``, ``/sessions/s-x``)."""
        return subscription_key(self.services.registry, session)

    @asynccontextmanager
    async def _lock(self, key: str) -> AsyncIterator[None]:
        """Subscribe and unsubscribe of one session run one at a time; the lock is
        dropped once nobody holds or waits for it (names are client-chosen)."""
        lock = self._subscription_locks.get(key)
        if lock is None:
            lock = self._subscription_locks[key] = trio.Lock()
        try:
            async with lock:
                yield
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._subscription_locks.pop(key, None)

    async def _end_subscription(self, key: str) -> None:
        """Cancel the key's forwarder and wait until it can send nothing more."""
        running = self._subscriptions.pop(key, None)
        if running is not None:
            running.scope.cancel()
            await running.done.wait()

    async def _unsubscribe(self, request: UnsubscribeSession) -> None:
        key = self._key(request.session)
        async with self._lock(key):
            await self._end_subscription(key)
        await self.send(Ok(request.id))

    async def _subscribe(self, request: SubscribeSession) -> None:
        """Replace the session's subscription, if any, atomically; errors before the
        ``subscribed`` frame are replied."""
        key = self._key(request.session)
        async with self._lock(key):
            await self._end_subscription(key)
            subscription = SessionSubscription(
                self.services.registry,
                self.services.store,
                request.session,
                request.after_seq,
                self.send,
                self.catch_up,
            )
            try:
                running = await self.ctx.nursery.start(self._forward, subscription, request.id, key)
            except Exception as error:
                await self.send(error_reply(request.id, error))
                return
            self._subscriptions[key] = running

    async def _forward(
        self,
        subscription: SessionSubscription,
        request_id: RequestId,
        key: str,
        *,
        task_status: trio.TaskStatus[Running] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        running = Running(trio.CancelScope(), trio.Event())
        try:
            with running.scope:
                await subscription.open()
                task_status.started(running)
                try:
                    await subscription.run(request_id)
                except Exception:
                    log.exception("subscription to %s failed", subscription.session)
        finally:
            running.done.set()
        if self._subscriptions.get(key) is running:
            del self._subscriptions[key]
