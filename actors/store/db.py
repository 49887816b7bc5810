"""The SQLite side of the store: schema, migrations and plain synchronous operations.

Everything here runs in a worker thread (``trio.to_thread``), one call at a time,
on one connection. WAL with ``synchronous=NORMAL``: a committed transaction
survives the process being killed (SIGKILL); only a power loss may lose the last
commits.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from actors.store.backend import SchemaTooNew
from actors.store.rows import EnvironmentRow as EnvironmentRow
from actors.store.rows import EventRow as EventRow
from actors.store.rows import Op as Op
from actors.store.rows import SessionRow as SessionRow
from actors.store.rows import SubagentRow as SubagentRow
from actors.store.rows import SummaryRow as SummaryRow
from actors.store.rows import not_at_rest

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    model TEXT NOT NULL,
    environment TEXT NOT NULL,
    working_dir TEXT,
    config BLOB NOT NULL,
    state TEXT NOT NULL,
    interrupted INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    timestamp REAL NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ssh_environments (
    name TEXT PRIMARY KEY,
    spec BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS seq_marks (
    session_id TEXT PRIMARY KEY,
    mark INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS summaries (
    session_id TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    iterations INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL,
    updated REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_by_state ON sessions(state);
CREATE TABLE IF NOT EXISTS history (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    turn BLOB NOT NULL,
    PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS subagents (
    id TEXT PRIMARY KEY,
    parent TEXT NOT NULL,
    address TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS subagents_by_parent ON subagents(parent);
CREATE TABLE IF NOT EXISTS ledgers (
    session_id TEXT PRIMARY KEY,
    spend BLOB NOT NULL
) WITHOUT ROWID
"""
"""Version 1: the tables as they were before the store had versions (every
statement ``IF NOT EXISTS``, so a database of that time takes it as it is)."""

ENVIRONMENTS = """
CREATE TABLE environments (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    spec BLOB NOT NULL
);
INSERT INTO environments SELECT name, 'ssh', spec FROM ssh_environments ORDER BY rowid;
DROP TABLE ssh_environments
"""
"""Version 2: one table for every kind of environment (the SSH ones moved in).
A rowid table: its order is the order environments were first added."""

LAST_EVENTS = """
CREATE TABLE last_events (
    session_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    timestamp REAL NOT NULL
) WITHOUT ROWID;
INSERT INTO last_events
SELECT s.id,
       (SELECT seq FROM events e WHERE e.session_id = s.id ORDER BY seq DESC LIMIT 1),
       (SELECT timestamp FROM events e WHERE e.session_id = s.id ORDER BY seq DESC LIMIT 1)
FROM sessions s WHERE EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id);
CREATE INDEX sessions_listed
    ON sessions(id, profile, model, working_dir, state, interrupted, created, updated)
"""
"""Version 3: each session's last stored event (its seq and time), kept with every
batch of events (:func:`apply`), and an index holding what a session list shows of
each session row, so that listing ten thousand sessions reads two small tables and
an index instead of seeking twice into the events' key per session and reading
every session's configuration past (issue 36)."""

MIGRATIONS = (SCHEMA, ENVIRONMENTS, LAST_EVENTS)
"""Migration N (1-based) takes a database from version N-1 to N; each runs in
one transaction with the version's update, so a start killed midway redoes it."""


def _statements(script: str) -> list[str]:
    return [statement.strip() for statement in script.split(";") if statement.strip()]


def schema_version(connection: sqlite3.Connection) -> int:
    found = connection.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='schema_version'"
    ).fetchone()
    if found is None:
        return 0
    row = connection.execute("SELECT version FROM schema_version").fetchone()
    return 0 if row is None else int(row[0])


def migrate(connection: sqlite3.Connection) -> int:
    """Bring the schema to the newest version this code knows, each step in its
    own transaction (under SQLite's write lock: two processes starting on one
    database migrate it once). Returns the version; a newer one is refused."""
    version = schema_version(connection)
    if version == len(MIGRATIONS):
        return version
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        version = schema_version(connection)
        if version > len(MIGRATIONS):
            raise SchemaTooNew(
                f"the store is at schema version {version}; this Troupe knows up to "
                f"{len(MIGRATIONS)} (it was opened by a newer Troupe)"
            )
        for script in MIGRATIONS[version:]:
            for statement in _statements(script):
                connection.execute(statement)
        connection.execute("DELETE FROM schema_version")
        connection.execute("INSERT INTO schema_version VALUES (?)", (len(MIGRATIONS),))
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise
    return len(MIGRATIONS)


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA busy_timeout=5000")
    migrate(connection)
    return connection


class StoreGone(OSError):
    """The database file is no longer where it was opened (its directory vanished,
    was unmounted or replaced): a write now would go to a file nobody will read."""


def identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the database file; raises OSError if it is not there."""
    found = path.stat()
    return found.st_dev, found.st_ino


def reopen(path: Path) -> sqlite3.Connection:
    """A new connection to an existing database (never a fresh empty one: a
    database that is not at its path is waited for, not replaced)."""
    connection = sqlite3.connect(
        f"file:{path}?mode=rw", uri=True, check_same_thread=False, isolation_level=None
    )
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA busy_timeout=5000")
    return connection


def open_read_only(path: Path) -> sqlite3.Connection:
    """The database as it is, for reading only, when it cannot be opened for
    writing (a read-only data directory without the WAL's shared-memory file):
    ``immutable`` tells SQLite nothing writes it meanwhile, which holds until the
    store reconnects for writing."""
    return sqlite3.connect(
        f"file:{path}?immutable=1", uri=True, check_same_thread=False, isolation_level=None
    )


def probe(connection: sqlite3.Connection) -> None:
    """Raise if the database cannot take a write now (read-only): take the write
    lock and give it back, writing nothing."""
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("ROLLBACK")


def apply(connection: sqlite3.Connection, ops: list[Op]) -> None:
    """Apply a batch in one transaction: one fsync-free commit for many events."""
    events = [op.args for op in ops if op.kind == "event"]
    connection.execute("BEGIN")
    try:
        for op in ops:
            if op.kind == "session":
                connection.execute(
                    "INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?)", op.args
                )
            elif op.kind == "state":
                connection.execute(
                    "UPDATE sessions SET state=?, interrupted=?, updated=? WHERE id=?", op.args
                )
            elif op.kind == "summary":
                connection.execute(
                    "INSERT OR REPLACE INTO summaries VALUES (?,?,?,?,?,?,?)", op.args
                )
            elif op.kind == "history":
                connection.execute("INSERT OR REPLACE INTO history VALUES (?,?,?)", op.args)
            elif op.kind == "env_put":
                connection.execute(
                    "INSERT INTO environments VALUES (?,?,?) ON CONFLICT(name)"
                    " DO UPDATE SET kind=excluded.kind, spec=excluded.spec",
                    op.args,
                )
            elif op.kind == "env_delete":
                connection.execute("DELETE FROM environments WHERE name=?", op.args)
            elif op.kind == "subagent":
                put_subagent(connection, *op.args)
            elif op.kind == "ledger":
                connection.execute("INSERT OR REPLACE INTO ledgers VALUES (?,?)", op.args)
            elif op.kind == "mark":
                connection.execute(
                    "INSERT INTO seq_marks VALUES (?,?) ON CONFLICT(session_id)"
                    " DO UPDATE SET mark=max(mark, excluded.mark)",
                    op.args,
                )
        if events:
            connection.executemany("INSERT OR IGNORE INTO events VALUES (?,?,?,?,?)", events)
            connection.executemany(_KEEP_LAST_EVENT, _last_of_each(events))
        connection.execute("COMMIT")
    except BaseException:
        # SQLite rolls a transaction back by itself on some errors (disk full, I/O):
        # a second ROLLBACK would fail and hide the error that matters.
        if connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise


_KEEP_LAST_EVENT = (
    "INSERT INTO last_events VALUES (?,?,?) ON CONFLICT(session_id)"
    " DO UPDATE SET seq=excluded.seq, timestamp=excluded.timestamp"
    " WHERE excluded.seq > last_events.seq"
)


def _last_of_each(events: list[tuple]) -> list[tuple[str, int, float]]:  # type: ignore[type-arg]
    """Each session's last event in a batch of event rows (session, seq, time, ...)."""
    last: dict[str, tuple[str, int, float]] = {}
    for session_id, seq, timestamp, *_ in events:
        known = last.get(session_id)
        if known is None or seq > known[1]:
            last[session_id] = (session_id, seq, timestamp)
    return list(last.values())


def _session_row(row: tuple) -> SessionRow:  # type: ignore[type-arg]
    return SessionRow(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8], row[9]
    )


def sessions(connection: sqlite3.Connection) -> list[SessionRow]:
    rows = connection.execute("SELECT * FROM sessions ORDER BY created").fetchall()
    return [_session_row(row) for row in rows]


def session(connection: sqlite3.Connection, session_id: str) -> SessionRow | None:
    row = connection.execute("SELECT * FROM sessions WHERE id=?", (session_id,)).fetchone()
    return None if row is None else _session_row(row)


NOT_AT_REST = f"SELECT * FROM sessions WHERE {not_at_rest()} ORDER BY created"
"""Every state but ``idle`` and ``closed``, as the three ranges around them: SQLite
answers ``state NOT IN (...)`` with a scan of every row, the ranges through the
state's index."""


def sessions_not_at_rest(connection: sqlite3.Connection) -> list[SessionRow]:
    """The sessions whose stored state is neither ``idle`` nor ``closed`` (an input
    was running): read through the state's index, not a scan of every row."""
    rows = connection.execute(NOT_AT_REST).fetchall()
    return [_session_row(row) for row in rows]


def summary(connection: sqlite3.Connection, session_id: str) -> SummaryRow | None:
    row = connection.execute("SELECT * FROM summaries WHERE session_id=?", (session_id,))
    found = row.fetchone()
    return None if found is None else SummaryRow(*found)


def seq_mark(connection: sqlite3.Connection, session_id: str) -> int:
    row = connection.execute("SELECT mark FROM seq_marks WHERE session_id=?", (session_id,))
    found = row.fetchone()
    return 0 if found is None else int(found[0])


def max_seq(connection: sqlite3.Connection, session_id: str) -> int:
    """The highest stored seq of one session: one seek in the events' key, however
    many events the store holds (``MAX`` over a key prefix reads its last entry)."""
    row = connection.execute("SELECT MAX(seq) FROM events WHERE session_id=?", (session_id,))
    return row.fetchone()[0] or 0


def summaries(connection: sqlite3.Connection) -> dict[str, SummaryRow]:
    rows = connection.execute("SELECT * FROM summaries").fetchall()
    return {row[0]: SummaryRow(*row) for row in rows}


def last_seqs(connection: sqlite3.Connection) -> dict[str, int]:
    rows = connection.execute("SELECT session_id, MAX(seq) FROM events GROUP BY session_id")
    return dict(rows.fetchall())


def seq_marks(connection: sqlite3.Connection) -> dict[str, int]:
    """Each session's reserved high-water mark: no seq at or below it may be issued again."""
    return dict(connection.execute("SELECT session_id, mark FROM seq_marks").fetchall())


def events_after(
    connection: sqlite3.Connection, session_id: str, after_seq: int, limit: int
) -> list[EventRow]:
    rows = connection.execute(
        "SELECT * FROM events WHERE session_id=? AND seq>? ORDER BY seq LIMIT ?",
        (session_id, after_seq, limit),
    ).fetchall()
    return [EventRow(*row) for row in rows]


def events_of_kinds(
    connection: sqlite3.Connection, session_id: str, kinds: tuple[str, ...]
) -> list[EventRow]:
    marks = ",".join("?" * len(kinds))
    rows = connection.execute(
        f"SELECT * FROM events WHERE session_id=? AND kind IN ({marks}) ORDER BY seq",
        (session_id, *kinds),
    ).fetchall()
    return [EventRow(*row) for row in rows]


def history(connection: sqlite3.Connection, session_id: str) -> list[bytes]:
    rows = connection.execute(
        "SELECT turn FROM history WHERE session_id=? ORDER BY idx", (session_id,)
    ).fetchall()
    return [row[0] for row in rows]


def environments(connection: sqlite3.Connection) -> list[EnvironmentRow]:
    """Every environment added and not removed, in the order first added."""
    try:
        found = connection.execute("SELECT name, kind, spec FROM environments ORDER BY rowid")
    except sqlite3.OperationalError:
        # A database of version 1 opened read-only (it could not be migrated yet).
        found = connection.execute("SELECT name, 'ssh', spec FROM ssh_environments ORDER BY rowid")
    return [EnvironmentRow(name, kind, bytes(spec)) for name, kind, spec in found.fetchall()]


# -- cost ledgers: each session's spend (its subagents' included), as its last
# ``processing_end`` said, so lists show it across restarts.


def ledgers(connection: sqlite3.Connection) -> dict[str, bytes]:
    """Each session's ledger (a JSON :class:`~protocol.session.Spend`)."""
    return dict(connection.execute("SELECT session_id, spend FROM ledgers").fetchall())


def ledger(connection: sqlite3.Connection, session_id: str) -> bytes | None:
    """One session's ledger, by key (a start reads only the live sessions')."""
    row = connection.execute(
        "SELECT spend FROM ledgers WHERE session_id = ?", (session_id,)
    ).fetchone()
    return row[0] if row else None


# -- subagents: their events live in ``events`` under their own id; this table
# says whose they are and where they were addressed, so a restarted server can
# replay and recover them.


def put_subagent(
    connection: sqlite3.Connection, subagent_id: str, parent: str, address: str
) -> None:
    connection.execute(
        "INSERT OR REPLACE INTO subagents VALUES (?,?,?)", (subagent_id, parent, address)
    )


def subagents_of(connection: sqlite3.Connection, parent: str) -> list[SubagentRow]:
    """The subagents of one top-level session (at any depth)."""
    rows = connection.execute(
        "SELECT id, parent, address FROM subagents WHERE parent=? ORDER BY id", (parent,)
    ).fetchall()
    return [SubagentRow(*row) for row in rows]


def subagents(connection: sqlite3.Connection) -> list[SubagentRow]:
    rows = connection.execute("SELECT id, parent, address FROM subagents ORDER BY id").fetchall()
    return [SubagentRow(*row) for row in rows]
