"""A session's event stream: numbered events, delivered to any number of subscribers.

Emitting never waits. Each subscriber has a buffer bounded in events and in bytes
(a few large tool outputs weigh more than thousands of small events); one that
cannot keep up loses its oldest events and is told how many it missed (an
``events_missed`` event) before it sees the next one, so a slow UI never slows the
session. The hub's own replay buffer (recent durable events) is bounded in bytes too.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import msgspec
import trio

from protocol.events import EventData, EventsMissedEvent, SessionEvent

BUFFER_BYTES = 1 << 20
"""What one subscriber may fall behind by, in encoded bytes, unless it asks otherwise."""
KEEP_BYTES = 2 << 20
"""What a hub keeps of its recent durable events for late subscribers, in bytes."""


def event_bytes(data: EventData) -> int:
    """An event's weight: the size of its JSON encoding (what a frame carries)."""
    return len(msgspec.json.encode(data, enc_hook=repr)) + 64


class Subscription:
    """An async iterator over one session's events; ends when the session closes."""

    def __init__(self, session_id: str, buffer: int, buffer_bytes: int = BUFFER_BYTES) -> None:
        if buffer < 1:
            raise ValueError("a subscription needs room for at least one event")
        self.session_id = session_id
        self._events: deque[tuple[SessionEvent, int]] = deque()
        self._buffer = buffer
        self._buffer_bytes = buffer_bytes
        self._bytes = 0
        self._missed = 0
        self._closed = False
        self._wake = trio.Event()

    @property
    def missed(self) -> int:
        return self._missed

    @property
    def buffered_bytes(self) -> int:
        return self._bytes

    def offer(self, event: SessionEvent, size: int | None = None) -> None:
        """Queue ``event`` (``size``: its weight, computed if not given), dropping the
        oldest events while the buffer is over either bound (the newest always fits)."""
        if self._closed:
            return
        size = event_bytes(event.data) if size is None else size
        while self._events and (
            len(self._events) >= self._buffer or self._bytes + size > self._buffer_bytes
        ):
            _, dropped = self._events.popleft()
            self._bytes -= dropped
            self._missed += 1
        self._events.append((event, size))
        self._bytes += size
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def note_missed(self, count: int) -> None:
        """Events the subscriber will never see (before it subscribed, and no longer
        kept): it is told, as for events dropped later."""
        if count:
            self._missed += count
            self._wake.set()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> SessionEvent:
        while not self._events and not self._missed:
            if self._closed:
                raise StopAsyncIteration
            self._wake = trio.Event()
            await self._wake.wait()
        if self._missed:
            missed, self._missed = self._missed, 0
            next_seq = self._events[0][0].seq if self._events else 0
            return SessionEvent(
                self.session_id, 0, time.time(), EventsMissedEvent(missed, next_seq)
            )
        event, size = self._events.popleft()
        self._bytes -= size
        return event


class EventHub:
    """Numbers a session's events and hands each to every subscriber."""

    def __init__(
        self, session_id: str, first_seq: int = 1, keep: int = 1024, keep_bytes: int = KEEP_BYTES
    ) -> None:
        self.session_id = session_id
        self._seq = first_seq - 1
        self.keep = keep
        self.keep_bytes = keep_bytes
        """Bounds of the replay buffer; a host may set them before the session starts."""
        self._recent: deque[tuple[SessionEvent, int]] = deque()
        """The latest durable events, so a late subscriber can start from a sequence
        number (SESSION_START included); deltas are live only."""
        self._recent_bytes = 0
        self._subscribers: list[Subscription] = []
        self._sinks: list[Callable[[SessionEvent], None]] = []

    @property
    def last_seq(self) -> int:
        return self._seq

    def emit(self, data: EventData) -> SessionEvent:
        """Number ``data`` as the session's next event and hand it out."""
        self._seq += 1
        event = SessionEvent(self.session_id, self._seq, time.time(), data)
        for sink in self._sinks:
            sink(event)
        if not (data.durable or self._subscribers):
            return event
        size = event_bytes(data)
        if data.durable:
            self._keep(event, size)
        for subscriber in self._subscribers:
            subscriber.offer(event, size)
        return event

    @property
    def recent_bytes(self) -> int:
        return self._recent_bytes

    def _keep(self, event: SessionEvent, size: int) -> None:
        recent = self._recent
        recent.append((event, size))
        self._recent_bytes += size
        while recent and (len(recent) > self.keep or self._recent_bytes > self.keep_bytes):
            self._recent_bytes -= recent.popleft()[1]

    def add_sink(self, sink: Callable[[SessionEvent], None]) -> None:
        """Call ``sink`` with every event, before any subscriber sees it.

        For a durable store: a sink never loses an event, so it must be quick (queue
        the event for a writer task) and must not raise."""
        self._sinks.append(sink)

    def subscribe(
        self, buffer: int = 1024, after_seq: int | None = None, buffer_bytes: int = BUFFER_BYTES
    ) -> Subscription:
        """A new subscription; with ``after_seq`` it starts with the kept durable events
        numbered after it (and an ``events_missed`` notice if some are no longer kept)."""
        subscription = Subscription(
            self.session_id,
            max(buffer, len(self._recent) + 1),
            max(buffer_bytes, self._recent_bytes + 1),
        )
        if after_seq is not None:
            kept = [(event, size) for event, size in self._recent if event.seq > after_seq]
            first_kept = kept[0][0].seq if kept else self._seq + 1
            subscription.note_missed(max(0, first_kept - after_seq - 1))
            for event, size in kept:
                subscription.offer(event, size)
        self._subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscription.close()
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)

    def close(self) -> None:
        for subscriber in self._subscribers:
            subscriber.close()
        self._subscribers.clear()
