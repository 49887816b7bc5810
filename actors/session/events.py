"""A session's event stream: numbered events, delivered to any number of subscribers.

Emitting never waits. Each subscriber has a bounded buffer; one that cannot keep
up loses its oldest events and is told how many it missed (an ``events_missed``
event) before it sees the next one, so a slow UI never slows the session.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import trio

from protocol.events import EventData, EventsMissedEvent, SessionEvent


class Subscription:
    """An async iterator over one session's events; ends when the session closes."""

    def __init__(self, session_id: str, buffer: int) -> None:
        if buffer < 1:
            raise ValueError("a subscription needs room for at least one event")
        self.session_id = session_id
        self._events: deque[SessionEvent] = deque()
        self._buffer = buffer
        self._missed = 0
        self._closed = False
        self._wake = trio.Event()

    @property
    def missed(self) -> int:
        return self._missed

    def offer(self, event: SessionEvent) -> None:
        if self._closed:
            return
        if len(self._events) >= self._buffer:
            self._events.popleft()
            self._missed += 1
        self._events.append(event)
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
            next_seq = self._events[0].seq if self._events else 0
            return SessionEvent(
                self.session_id, 0, time.time(), EventsMissedEvent(missed, next_seq)
            )
        return self._events.popleft()


class EventHub:
    """Numbers a session's events and hands each to every subscriber."""

    def __init__(self, session_id: str, first_seq: int = 1, keep: int = 1024) -> None:
        self.session_id = session_id
        self._seq = first_seq - 1
        self._recent: deque[SessionEvent] = deque(maxlen=keep)
        """The latest durable events, so a late subscriber can start from a sequence
        number (SESSION_START included); deltas are live only."""
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
        if data.durable:
            self._recent.append(event)
        for subscriber in self._subscribers:
            subscriber.offer(event)
        return event

    def add_sink(self, sink: Callable[[SessionEvent], None]) -> None:
        """Call ``sink`` with every event, before any subscriber sees it.

        For a durable store: a sink never loses an event, so it must be quick (queue
        the event for a writer task) and must not raise."""
        self._sinks.append(sink)

    def subscribe(self, buffer: int = 1024, after_seq: int | None = None) -> Subscription:
        """A new subscription; with ``after_seq`` it starts with the kept durable events
        numbered after it (and an ``events_missed`` notice if some are no longer kept)."""
        subscription = Subscription(self.session_id, max(buffer, len(self._recent) + 1))
        if after_seq is not None:
            kept = [event for event in self._recent if event.seq > after_seq]
            first_kept = kept[0].seq if kept else self._seq + 1
            subscription.note_missed(max(0, first_kept - after_seq - 1))
            for event in kept:
                subscription.offer(event)
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
