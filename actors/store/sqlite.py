"""The SQLite backend of the store (the default): one file, ``troupe.db``, in WAL.

One connection, used by one worker thread at a time (reads and writes take turns).
The file is watched: a database that vanished from its path (its directory
unmounted or removed) refuses writes instead of writing into a file nobody will
open again, and a connection that met a fault is replaced before the next try
(SQLite keeps a connection opened on a read-only file read-only).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

from actors.store import db
from actors.store.rows import EnvironmentRow, EventRow, Op, SessionRow, SubagentRow, SummaryRow

log = logging.getLogger("troupe.store")

BAD_ROW = (
    OverflowError, ValueError, TypeError,
    sqlite3.InterfaceError, sqlite3.IntegrityError, sqlite3.DataError,
)  # fmt: skip
"""Errors of one row's content (the decoder keeps them out; this is the last net)."""

FAULTS = (sqlite3.Error, OSError)
"""Anything else the database or the file system raises: the store cannot write now."""


class SqliteBackend:
    """``troupe.db`` in a data directory. Open it with :func:`open_sqlite`."""

    faults: tuple[type[BaseException], ...] = FAULTS
    serial = True

    def __init__(
        self, connection: sqlite3.Connection, path: Path, identity: tuple[int, int] | None
    ) -> None:
        self.path: Path | None = path
        self._file = path
        self.location = str(path)
        self._connection = connection
        self._identity = identity
        """(device, inode) of the file opened; a write checks it is still there."""

    # -- writes

    def apply(self, batch: list[Op]) -> None:
        self._check_file()
        try:
            db.apply(self._connection, batch)
        except BAD_ROW as error:
            # The writer is every session's durability: one row SQLite cannot hold
            # must not stop it. Apply the batch op by op, dropping only the bad.
            log.error("store batch failed (%s); writing it op by op", error)
            for op in batch:
                try:
                    db.apply(self._connection, [op])
                except BAD_ROW as bad:
                    log.error("store dropped a %s write it cannot hold: %s", op.kind, bad)

    def recover(self) -> None:
        """A new connection after a fault: SQLite keeps a connection opened on a
        read-only file read-only, and one whose file vanished writes into the void."""
        connection = db.reopen(self._file)
        db.migrate(connection)  # opened read-only at first: never migrated yet
        old, self._connection = self._connection, connection
        self._identity = db.identity(self._file)
        with contextlib.suppress(sqlite3.Error):
            old.close()

    def probe(self) -> None:
        db.probe(self._connection)

    def close(self) -> None:
        self._connection.close()

    def _check_file(self) -> None:
        """A vanished database file (its directory removed or unmounted) would take
        writes into a file no one will read: refuse them until a database is
        back at the path, then write there on a new connection."""
        if self._identity is None:
            return
        try:
            found = db.identity(self._file)
        except FileNotFoundError:
            raise db.StoreGone(f"{self._file} is gone (its data directory vanished?)") from None
        if found != self._identity:
            connection = db.reopen(self._file)
            old, self._connection, self._identity = self._connection, connection, found
            with contextlib.suppress(sqlite3.Error):
                old.close()
            log.warning("store reopened %s (the file there changed)", self._file)

    # -- reads

    def sessions(self) -> list[SessionRow]:
        return db.sessions(self._connection)

    def session(self, session_id: str) -> SessionRow | None:
        return db.session(self._connection, session_id)

    def sessions_not_at_rest(self) -> list[SessionRow]:
        return db.sessions_not_at_rest(self._connection)

    def summary(self, session_id: str) -> SummaryRow | None:
        return db.summary(self._connection, session_id)

    def summaries(self) -> dict[str, SummaryRow]:
        return db.summaries(self._connection)

    def seq_mark(self, session_id: str) -> int:
        return db.seq_mark(self._connection, session_id)

    def seq_marks(self) -> dict[str, int]:
        return db.seq_marks(self._connection)

    def max_seq(self, session_id: str) -> int:
        return db.max_seq(self._connection, session_id)

    def last_seqs(self) -> dict[str, int]:
        return db.last_seqs(self._connection)

    def events_after(self, session_id: str, after_seq: int, limit: int) -> list[EventRow]:
        return db.events_after(self._connection, session_id, after_seq, limit)

    def events_of_kinds(self, session_id: str, kinds: tuple[str, ...]) -> list[EventRow]:
        return db.events_of_kinds(self._connection, session_id, kinds)

    def history(self, session_id: str) -> list[bytes]:
        return db.history(self._connection, session_id)

    def ledgers(self) -> dict[str, bytes]:
        return db.ledgers(self._connection)

    def ledger(self, session_id: str) -> bytes | None:
        return db.ledger(self._connection, session_id)

    def subagents(self) -> list[SubagentRow]:
        return db.subagents(self._connection)

    def subagents_of(self, parent: str) -> list[SubagentRow]:
        return db.subagents_of(self._connection, parent)

    def environments(self) -> list[EnvironmentRow]:
        return db.environments(self._connection)


def open_sqlite(data_dir: Path) -> tuple[SqliteBackend, Exception | None]:
    """In a worker thread: ``troupe.db`` in ``data_dir``, created and migrated if
    needed, and the fault it opened with, if any. A data directory read-only from
    the start opens for reading (writes refused, tried again, until it can
    write); without a database at all, :class:`OSError`/:class:`sqlite3.Error`."""
    path = data_dir / "troupe.db"
    fault: Exception | None = None
    try:
        connection = db.connect(path)
    except FAULTS as error:
        fault = error
        connection = db.open_read_only(path)
        try:
            db.sessions(connection)
        except FAULTS:
            connection.close()
            raise error from None
    backend = SqliteBackend(connection, path, db.identity(path))
    if fault is None:
        try:
            db.probe(connection)
        except FAULTS as error:
            fault = error
    return backend, fault
