"""One client's subscription to one session: replay from the store, then live.

The order of operations is what makes a resubscribe exact: subscribe to the live
stream first (so nothing emitted from now on is missed), then replay every stored
event after the client's cursor, then follow the live stream, skipping what the
replay already covered. A durable event is sent only once the store has it, so a
client never holds an event the store could lose. If the live stream overflows
(``events_missed``), the gap is filled from the store, so durable events are never
lost; only deltas may be.

While the store cannot write, the durable events after the last stored one wait
here; the subscriber is told at once, out of sequence (``store_unavailable``,
``seq`` 0), and again when the store writes (``store_available``), after which
the held events follow in order.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import trio

from actors.kernel import Rejection
from actors.server.registry import SessionNotFound, SessionRegistry
from actors.store import Store
from actors.store.health import SessionMoved, StoreUnavailable
from protocol.events import (
    EventData,
    EventsMissedEvent,
    SessionEvent,
    StoreAvailableEvent,
    StoreUnavailableEvent,
    event_fields,
)
from protocol.session import EventStream, Subscribe
from protocol.wire import Event, RequestId, Subscribed

LIVE_BUFFER = 4096
LIVE_BUFFER_BYTES = 8 << 20
"""What a subscription may lag the session by before it refills from the store."""
_data = msgspec.json.Decoder(dict[str, Any])

Send = Callable[[Any], Awaitable[None]]


def subscription_key(registry: SessionRegistry, session: str) -> str:
    """The session a name resolves to: its id for a top-level session (named by id
    or address), the canonical address for a subagent, the name itself if unknown."""
    if session.startswith("/") and session.strip("/").count("/") > 1:
        return "/" + session.strip("/")
    try:
        return registry.record(session).row.id
    except SessionNotFound:
        return session


class SessionSubscription:
    """Forwards one session's events to a connection's outbox."""

    def __init__(
        self,
        registry: SessionRegistry,
        store: Store,
        session: str,
        after_seq: int,
        send: Send,
        catch_up: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """``catch_up`` is awaited when the live stream overflowed, before the gap is
        refilled from the store: the connection judges whether its client is behind."""
        self.registry = registry
        self.store = store
        self.session = session
        self.cursor = max(0, after_seq)
        self.send = send
        self.catch_up = catch_up
        self.session_id: str | None = None
        self._live: EventStream | None = None
        self._tail = False
        """On a fleet: the session runs on another node (or none now): its events
        are read from the store as they are committed (:meth:`_follow_store`)."""
        self._last_seq = 0
        self._told_since = 0.0
        """When the outage this subscriber was told of began; 0 if none was told."""

    async def open(self) -> None:
        """Subscribe to the live stream; raises (no such session) before any frame."""
        await self.registry.load(self.session)
        self._live, self._last_seq = await self._open()

    async def run(self, request_id: RequestId) -> None:
        """Send ``subscribed``, the replay, pending approvals, then live events."""
        live = self._live
        await self.send(Subscribed(request_id, self.session, self._last_seq))
        try:
            if live is None and self._tail:
                await self._follow_store()
                return
            if live is None:
                await self._replay(self._last_seq)
                await self._resend_pending()
                return
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._tell_store_faults)
                try:
                    await self._replay(self._last_seq)
                    await self._resend_pending()
                    await self._follow(live)
                except SessionMoved:
                    pass
                if self.registry.fleet is not None and not self._ended():
                    await self._follow_store()  # its actor stopped here: it goes on elsewhere
                nursery.cancel_scope.cancel()
        finally:
            if live is not None:
                live.close()

    async def _open(self) -> tuple[EventStream | None, int]:
        registry = self.registry
        key = self.session
        if key.startswith("/") and key.strip("/").count("/") > 1:
            return await self._open_subagent(key)
        record = registry.record(key)
        self.session_id = record.row.id
        startable = self.store.health.available or record.unstarted  # it reads nothing
        if record.state != "closed" and not record.live and startable:
            try:
                record = await registry.live(key)
            except Rejection as refused:
                # OwnedElsewhere, by its code: the fleet's module is imported by a
                # fleet's node only (an embedded run has none)
                if refused.code == "owned_elsewhere":  # on another node: followed in the store
                    self._tail = True
                # else it cannot resume now (no model key, SSH host gone): replay only
                return None, record.last_seq
        if not record.live:
            return None, record.last_seq
        assert record.ref is not None
        live = await record.ref.ask(Subscribe(LIVE_BUFFER, buffer_bytes=LIVE_BUFFER_BYTES))
        return live, record.last_seq

    async def _open_subagent(self, address: str) -> tuple[EventStream | None, int]:
        """A subagent: replayed from the store like a session, then followed live
        while its actor runs (it is not started again once it has stopped)."""
        stored = self.registry.subagent(address)
        try:
            ref = self.registry.ref_for(address)
        except SessionNotFound:
            if stored is None:
                raise
            self.session_id = stored.id
            return None, stored.last_seq
        if stored is None:  # not stored (a host without a store): its hub's recent events
            live = await ref.ask(
                Subscribe(LIVE_BUFFER, self.cursor, buffer_bytes=LIVE_BUFFER_BYTES)
            )
            self.session_id = live.session_id
            return live, 0
        self.session_id = stored.id
        live = await ref.ask(Subscribe(LIVE_BUFFER, buffer_bytes=LIVE_BUFFER_BYTES))
        return live, stored.last_seq

    def _ended(self) -> bool:
        record = self.registry.records.get(self.session_id or "")
        return record is not None and record.state == "closed" and record.live is False

    async def _follow_store(self) -> None:
        """Send the session's durable events from the store as they are committed,
        whichever node writes them, from the cursor on: the doorbell
        (``NOTIFY``) wakes this at once; without it, the next poll reads anyway.
        Ends with the session (``session_end``) or when cancelled."""
        fleet = self.registry.fleet
        assert fleet is not None and self.session_id is not None
        session_id = self.session_id
        await self._resend_pending_from_store(session_id)
        while True:
            ended = await self._send_stored(session_id, until_end=True)
            if ended:
                return
            await fleet.events.wait(session_id)

    async def _resend_pending_from_store(self, session_id: str) -> None:
        """The approval requests still open, as the store has them, sent again to a
        subscriber already past them (its node may not run the session: a restart
        or a take-over reopened them elsewhere)."""
        try:
            marks = await self.store.events_of_kinds(
                session_id, "approval_request", "approval_resolved", "processing_end",
                "session_end",
            )  # fmt: skip
        except StoreUnavailable:
            return
        open_requests: dict[str, Any] = {}
        for row in marks:
            if row.kind in ("processing_end", "session_end"):
                open_requests.clear()
                continue
            data = _data.decode(row.data)
            request_id = str(data.get("request_id", ""))
            if row.kind == "approval_request":
                open_requests[request_id] = (row, data)
            else:
                open_requests.pop(request_id, None)
        for row, data in open_requests.values():
            if row.seq <= self.cursor:
                await self.send(
                    Event(self.session, row.session_id, row.seq, row.timestamp, row.kind, data,
                          True)
                )  # fmt: skip

    async def _replay(self, upto: int) -> None:
        """Send stored events after the cursor, at least up to ``upto``."""
        session_id = self.session_id
        if session_id is None or self.registry.issued_seq(session_id) is None:
            return
        await self._send_stored(session_id)  # what is stored now, even in an outage
        await self.store.wait_committed(session_id, upto)
        await self._tell_available()
        await self._send_stored(session_id)

    async def _send_stored(self, session_id: str, until_end: bool = False) -> bool:
        """Send what the store holds after the cursor, through an outage (the
        subscriber is told, the read tried again). With ``until_end``, stop after
        ``session_end``: True once it was sent."""
        failures = 0
        while True:
            try:
                rows = await self.store.events_after(session_id, self.cursor)
            except StoreUnavailable as error:
                await self._wait_readable(error, failures)
                failures += 1
                continue
            if failures:
                failures = 0
                await self._until_available()
            if not rows:
                return False
            for row in rows:
                await self.send(
                    Event(self.session, row.session_id, row.seq, row.timestamp, row.kind,
                          _data.decode(row.data))
                )  # fmt: skip
                self.cursor = row.seq
                if until_end and row.kind == "session_end":
                    return True

    async def _wait_readable(self, error: StoreUnavailable, failures: int) -> None:
        """The store cannot be read now (a PostgreSQL that is down: SQLite's file is
        read as long as it is there): tell the subscriber once, as for writes, and
        try again with backoff; the replay goes on from its cursor once it reads,
        after ``store_available``."""
        if not self._told_since:
            self._told_since = self.store.health.since or time.time()
            await self.send(self._notice(StoreUnavailableEvent(str(error), self._told_since)))
        await trio.sleep(min(0.05 * 2**failures, 2.0))

    async def _until_available(self) -> None:
        """The store reads again after an outage this subscriber was told of: wait
        until it writes again too, and say so, so that ``store_available`` comes
        before the first event replayed, as promised (a PostgreSQL that restarts
        answers a read before the writer's retry has gone through)."""
        health = self.store.health
        while self._told_since:
            changed = health.changed
            if health.available:
                break
            await changed.wait()
        await self._tell_available()

    async def _resend_pending(self) -> None:
        try:
            pending = self.registry.pending_approvals(self.session)
        except SessionNotFound:
            return
        for event in pending:
            if event.seq <= self.cursor:
                await self.send(self._frame(event, resent=True))

    async def _follow(self, live: EventStream) -> None:
        async for event in live:
            if isinstance(event.data, EventsMissedEvent):
                assert self.session_id is not None
                if self.catch_up is not None:
                    await self.catch_up()
                await self._replay(self.registry.issued_seq(self.session_id) or 0)
                continue
            if event.seq <= self.cursor:
                continue
            if event.data.durable:
                await self.store.wait_committed(event.session_id, event.seq)
            else:  # its number must never be issued again, even after a crash
                await self.store.wait_reserved(event.session_id, event.seq)
            await self._tell_available()
            await self.send(self._frame(event))
            self.cursor = event.seq

    async def _tell_store_faults(self) -> None:
        """Tell the subscriber, live, when its session's writes wait on a store
        that cannot write, and when they go through again."""
        health = self.store.health
        while True:
            changed = health.changed
            if not self._told_since and not health.available and self.session_id in health.waiting:
                self._told_since = health.since
                await self.send(self._notice(StoreUnavailableEvent(health.reason, health.since)))
            elif not await self._tell_available():
                await changed.wait()

    async def _tell_available(self) -> bool:
        """Send ``store_available`` if this subscriber was told of an outage that
        is over: before the first event held by it, whichever task gets there first."""
        if not self._told_since or not self.store.health.available:
            return False
        down = round(time.time() - self._told_since, 3)
        self._told_since = 0.0
        await self.send(self._notice(StoreAvailableEvent(down)))
        return True

    def _notice(self, data: EventData) -> Event:
        """An out-of-sequence notice (``seq`` 0): it jumps the queue of held events."""
        assert self.session_id is not None
        return Event(
            self.session, self.session_id, 0, time.time(), data.kind, event_fields(data)
        )  # fmt: skip

    def _frame(self, event: SessionEvent, resent: bool = False) -> Event:
        return Event(
            self.session, event.session_id, event.seq, event.timestamp, event.kind,
            event_fields(event.data), resent,
        )  # fmt: skip
