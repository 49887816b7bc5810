"""The one interface every store backend offers (SQLite, PostgreSQL).

A backend is synchronous: :class:`~actors.store.store.Store` calls it from trio's
worker threads (``trio.to_thread.run_sync``), one write batch at a time, and owns
everything above it: the write queue, batching, retry with backoff during an
outage, the store's health, and waiting for what is on disk. So both backends
behave the same by construction; a backend only says how to put a batch in one
transaction, how to read, and which of its errors mean "cannot write now".
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from actors.store.rows import EnvironmentRow, EventRow, Op, SessionRow, SubagentRow, SummaryRow

SCHEMA_VERSION_TABLE = "schema_version"
"""Both backends keep their schema's version in a one-row table of this name; a
start migrates up to the version the code knows, and refuses a newer one."""


class SchemaTooNew(Exception):
    """The database was migrated by a newer Troupe: this one must not write it."""


class FencedOut(Exception):
    """A write batch refused because this node lost the lease of a session in it
    (another node took the session over): that session's writes are dropped, the
    rest of the batch is tried again (:mod:`actors.store.ownership`)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id} is owned by another node now")
        self.session_id = session_id


class StoreBackend(Protocol):
    """A database holding the store's tables. Every method runs in a worker thread."""

    @property
    def faults(self) -> tuple[type[BaseException], ...]:
        """Errors that mean the database cannot be used now (disk full, gone, a
        server restarting): the batch waits and is tried again."""
        ...

    @property
    def serial(self) -> bool:
        """True when reads and writes share one connection and must take turns."""
        ...

    @property
    def location(self) -> str:
        """Where the data is, for people (a path, or a URL without its password)."""
        ...

    @property
    def path(self) -> Path | None:
        """The database file, for a file backend."""
        ...

    # -- writes
    def apply(self, batch: list[Op]) -> None:
        """Apply ``batch`` in one transaction. Applying it again after a fault is
        harmless (events go in once, marks only grow, the rest is replaced in
        order). A row the database cannot hold is dropped with an error in the
        log, never the batch; a fault raises one of :attr:`faults`."""
        ...

    def recover(self) -> None:
        """Before the next attempt after a fault: reconnect if that is needed."""
        ...

    def probe(self) -> None:
        """Raise one of :attr:`faults` if the database cannot take a write now."""
        ...

    def close(self) -> None: ...

    # -- reads
    def sessions(self) -> list[SessionRow]: ...
    def session(self, session_id: str) -> SessionRow | None: ...
    def sessions_not_at_rest(self) -> list[SessionRow]:
        """Sessions whose state is neither ``idle`` nor ``closed`` (an input ran)."""
        ...

    def summary(self, session_id: str) -> SummaryRow | None: ...
    def summaries(self) -> dict[str, SummaryRow]: ...
    def seq_mark(self, session_id: str) -> int: ...
    def seq_marks(self) -> dict[str, int]: ...
    def max_seq(self, session_id: str) -> int:
        """The highest stored seq of one session (0 for none): one index seek."""
        ...

    def last_seqs(self) -> dict[str, int]: ...
    def events_after(self, session_id: str, after_seq: int, limit: int) -> list[EventRow]: ...
    def events_of_kinds(self, session_id: str, kinds: tuple[str, ...]) -> list[EventRow]: ...
    def history(self, session_id: str) -> list[bytes]: ...
    def ledgers(self) -> dict[str, bytes]: ...
    def ledger(self, session_id: str) -> bytes | None: ...
    def subagents(self) -> list[SubagentRow]: ...
    def subagents_of(self, parent: str) -> list[SubagentRow]: ...
    def environments(self) -> list[EnvironmentRow]:
        """Every registered environment, in the order they were first added."""
        ...
