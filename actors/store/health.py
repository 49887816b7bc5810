"""Whether the store can write now: a store fault is an outage of writes, not of
the server.

The writer reports here when a batch fails for a reason outside the rows (disk
full, a read-only or vanished data directory, an I/O error) and when writing works
again. Whoever must react (the sessions' subscriptions, the requests that would
write, the sessions whose input runs) waits on :meth:`StoreHealth.wait_changed`
instead of polling. Nothing is dropped meanwhile: the queued writes stay queued and
are written, in order, once the store is back.
"""

from __future__ import annotations

import time

import trio

from actors.kernel import Rejection

STORE_UNAVAILABLE = "store_unavailable"


class StoreUnavailable(Rejection):
    """A write was needed and the store cannot take it now (the typed error a
    refused request gets; it clears by itself once the store writes again)."""

    code = STORE_UNAVAILABLE


class SessionMoved(StoreUnavailable):
    """This node no longer owns the session (another node of the fleet took it
    over): what it still had queued for it is not written here."""

    code = "session_moved"


class StoreCannotOpen(StoreUnavailable, OSError):
    """The store could not be opened at all (no database, no server): still the
    typed store fault for ``troupe serve``'s one line, and an ``OSError`` for an
    embedding program, as opening a bad data directory always was."""


class StoreHealth:
    """The store's write availability, the sessions that needed a write during the
    current outage, and a doorbell for changes."""

    def __init__(self) -> None:
        self.available = True
        self.reason = ""
        self.since = 0.0
        """When the current outage began (``time.time()``); 0 while available."""
        self.outages = 0
        self.waiting: set[str] = set()
        """Sessions (and subagents) with writes held back by the current outage."""
        self._changed = trio.Event()

    def fail(self, reason: str, sessions: set[str]) -> None:
        """The store could not write; ``sessions`` are those whose writes wait."""
        changed = self.available or reason != self.reason or not sessions <= self.waiting
        if self.available:
            self.available = False
            self.since = time.time()
            self.outages += 1
        self.reason = reason
        self.waiting |= sessions
        if changed:
            self._ring()

    def need(self, session_id: str) -> None:
        """A session queued a write during the outage: it needs the store too."""
        if not self.available and session_id not in self.waiting:
            self.waiting.add(session_id)
            self._ring()

    def recover(self) -> None:
        if self.available:
            return
        self.available = True
        self.reason = ""
        self.since = 0.0
        self.waiting = set()
        self._ring()

    def refuse(self, what: str) -> None:
        """Raise :class:`StoreUnavailable` if the store cannot write now."""
        if not self.available:
            raise StoreUnavailable(f"{what} refused: the store cannot write ({self.reason})")

    @property
    def changed(self) -> trio.Event:
        """Set at the next change: take it before looking, then wait on it."""
        return self._changed

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def _ring(self) -> None:
        changed, self._changed = self._changed, trio.Event()
        changed.set()
