"""The PostgreSQL backend of the store: many servers can share one database.

psycopg 3 with its connection pool, called from trio's worker threads: psycopg's
async API (and asyncpg) run on asyncio only, and the store already runs its
SQLite calls in worker threads, so both backends sit behind the same synchronous
interface (see docs/decisions.md). The tables live in their own PostgreSQL
schema, ``troupe``, created and migrated on start under an advisory lock, so servers
starting together migrate once.

A write batch is one transaction, its events in one ``executemany`` (which
psycopg pipelines: one round trip for the lot). When PostgreSQL restarts or cannot be reached, every
psycopg error is a fault: the store keeps the batch and tries again with backoff;
the pool replaces broken connections and checks each one it hands out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from actors.store.backend import SchemaTooNew
from actors.store.rows import (
    EnvironmentRow,
    EventRow,
    Op,
    SessionRow,
    SubagentRow,
    SummaryRow,
    not_at_rest,
)

log = logging.getLogger("troupe.store")

MIGRATION_LOCK = 0x7472_6F75_7065  # "troupe": one advisory lock key for migrations
CONNECT_DEFAULTS = {
    "connect_timeout": "5",
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "application_name": "troupe",
}
"""What a URL does not say: give up connecting after 5 s, and notice a peer gone
silent within about 25 s (TCP only; a Unix socket reports a closed server at once)."""
WAIT = 3.0
"""Seconds to wait for a pooled connection before the attempt counts as a fault."""
POOL_MAX = 4
"""The writer plus a few concurrent reads; reads never queue behind a batch."""

V1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    model TEXT NOT NULL,
    environment TEXT NOT NULL,
    working_dir TEXT,
    config BYTEA NOT NULL,
    state TEXT NOT NULL,
    interrupted INTEGER NOT NULL DEFAULT 0,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL
);
CREATE INDEX sessions_by_state ON sessions(state);
CREATE TABLE events (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    timestamp DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE seq_marks (
    session_id TEXT PRIMARY KEY,
    mark BIGINT NOT NULL
);
CREATE TABLE summaries (
    session_id TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    iterations BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION,
    updated DOUBLE PRECISION NOT NULL
);
CREATE TABLE history (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    turn BYTEA NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE subagents (
    id TEXT PRIMARY KEY,
    parent TEXT NOT NULL,
    address TEXT NOT NULL
);
CREATE INDEX subagents_by_parent ON subagents(parent);
CREATE TABLE ledgers (
    session_id TEXT PRIMARY KEY,
    spend BYTEA NOT NULL
);
CREATE TABLE environments (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    spec BYTEA NOT NULL,
    position BIGINT GENERATED ALWAYS AS IDENTITY
)
"""
"""Version 1 here is SQLite's version 2 (PostgreSQL came after the move of SSH
environments into one table); the two count separately."""

V2 = """
CREATE TABLE session_leases (
    session_id TEXT PRIMARY KEY,
    node_id TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX session_leases_by_node ON session_leases(node_id)
"""
"""Version 2: who owns each live session (:mod:`actors.store.leases`). A row is
never deleted, so a session's epoch only ever grows."""

V3 = """
CREATE TABLE nodes (
    node_id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    started TIMESTAMPTZ NOT NULL,
    seen TIMESTAMPTZ NOT NULL,
    draining BOOLEAN NOT NULL DEFAULT false
);
CREATE TABLE inbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id TEXT NOT NULL,
    request BYTEA NOT NULL,
    taken_by TEXT,
    reply BYTEA,
    created TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX inbox_waiting ON inbox(session_id) WHERE reply IS NULL;
ALTER TABLE session_leases ADD COLUMN renewed TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
"""
"""Version 3: the nodes of a fleet (where each answers, when it was last seen)
and the inbox of requests one node hands another's session (the message is the
row; a ``NOTIFY`` only rings the bell: :mod:`actors.store.ownership`), and when
each lease was last renewed (``troupe nodes`` shows its age)."""

V4 = """
ALTER TABLE nodes ADD COLUMN alive_until TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp();
CREATE VIEW leases AS
SELECT l.session_id, l.node_id, l.epoch,
       CASE WHEN l.expires_at = 'infinity' THEN coalesce(n.alive_until, l.renewed)
            ELSE l.expires_at END AS expires_at,
       CASE WHEN l.expires_at = 'infinity' THEN greatest(l.renewed, n.seen)
            ELSE l.renewed END AS renewed
FROM session_leases l LEFT JOIN nodes n ON n.node_id = l.node_id
"""
"""Version 4: a fleet node's leases last as long as its heartbeat (``expires_at``
``infinity`` in the lease row: the node's ``alive_until`` decides), so a node
renews one row per period, not one per session it holds; ``leases`` is every
lease with the expiry that holds for it (:mod:`actors.store.leases`)."""

MIGRATIONS = (V1, V2, V3, V4)

BAD_ROW = (OverflowError, ValueError, TypeError, psycopg.DataError, psycopg.IntegrityError)
"""Errors of one row's content: that row is dropped (with an error in the log)."""
FAULTS = (psycopg.Error, OSError)
"""Everything else: the database cannot take the batch now (restarting, gone,
read-only, full); the batch is kept and tried again."""

_SESSION_UPSERT = (
    " ON CONFLICT (id) DO UPDATE SET profile=excluded.profile, model=excluded.model,"
    " environment=excluded.environment, working_dir=excluded.working_dir,"
    " config=excluded.config, state=excluded.state, interrupted=excluded.interrupted,"
    " created=excluded.created, updated=excluded.updated"
)
_MARK_UPSERT = (
    " ON CONFLICT (session_id) DO UPDATE SET mark=GREATEST(seq_marks.mark, excluded.mark)"
)
_SQL = {
    "session": "INSERT INTO sessions VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)" + _SESSION_UPSERT,
    "state": "UPDATE sessions SET state=%s, interrupted=%s, updated=%s WHERE id=%s",
    "summary": "INSERT INTO summaries VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (session_id)"
    " DO UPDATE SET task=excluded.task, iterations=excluded.iterations,"
    " input_tokens=excluded.input_tokens, output_tokens=excluded.output_tokens,"
    " cost_usd=excluded.cost_usd, updated=excluded.updated",
    "history": "INSERT INTO history VALUES (%s,%s,%s) ON CONFLICT (session_id, idx)"
    " DO UPDATE SET turn=excluded.turn",
    "ledger": "INSERT INTO ledgers VALUES (%s,%s) ON CONFLICT (session_id)"
    " DO UPDATE SET spend=excluded.spend",
    "subagent": "INSERT INTO subagents VALUES (%s,%s,%s) ON CONFLICT (id)"
    " DO UPDATE SET parent=excluded.parent, address=excluded.address",
    "env_put": "INSERT INTO environments (name, kind, spec) VALUES (%s,%s,%s)"
    " ON CONFLICT (name) DO UPDATE SET kind=excluded.kind, spec=excluded.spec",
    "env_delete": "DELETE FROM environments WHERE name=%s",
    "mark": "INSERT INTO seq_marks VALUES (%s,%s)" + _MARK_UPSERT,
}
_INSERT_EVENT = "INSERT INTO events VALUES (%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING"
COPY_FROM = 64
"""From this many events in a batch, they go in by COPY (through a staging table,
so an event already stored, from a batch applied again after a fault, is still
inserted once); fewer go by ``executemany``."""
_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS events_in"
    " (LIKE troupe.events INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
)


def _text(value: str) -> str:
    """PostgreSQL's text cannot hold NUL (SQLite's can): a model's or user's NUL
    becomes U+FFFD instead of losing the row."""
    return value.replace("\x00", "\ufffd")


def _args(op: Op) -> tuple[Any, ...]:
    if op.kind == "summary":
        return (op.args[0], _text(op.args[1]), *op.args[2:])
    return op.args


def _apply(connection: psycopg.Connection[Any], ops: list[Op]) -> None:
    # No explicit pipeline around it: when the server goes away mid-batch, leaving
    # a pipeline raises its own error and hides the reason (executemany pipelines
    # the events by itself).
    with connection.transaction(), connection.cursor() as cursor:
        write(cursor, ops)


def write(cursor: psycopg.Cursor[Any], ops: list[Op]) -> None:
    """Apply ``ops`` inside the caller's transaction (a fenced write checks its
    lease in the same transaction first: :mod:`actors.store.leases`)."""
    events = [op.args for op in ops if op.kind == "event"]
    for kind, rows in _runs(ops):
        many = _MANY.get(kind)
        if len(rows) == 1:
            cursor.execute(_SQL[kind].encode(), rows[0])
        elif many is not None:  # one statement for the run, its rows as arrays
            sql, merge = many
            cursor.execute(sql, [list(column) for column in zip(*merge(rows), strict=True)])
        else:
            cursor.executemany(_SQL[kind].encode(), rows)
    if len(events) >= COPY_FROM:
        cursor.execute(_STAGING)
        with cursor.copy("COPY events_in FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "int8", "float8", "text", "bytea"])
            for row in events:
                copy.write_row(row)
        cursor.execute("INSERT INTO events SELECT * FROM events_in ON CONFLICT DO NOTHING")
    elif events:
        cursor.executemany(_INSERT_EVENT, events)


def _last_of_each(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A session row replaced whole: the last of each id counts (one statement may
    not change a row twice)."""
    return list({row[0]: row for row in rows}.values())


def _highest_of_each(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A seq mark only ever rises: the highest of each session counts."""
    highest: dict[Any, tuple[Any, ...]] = {}
    for row in rows:
        kept = highest.get(row[0])
        if kept is None or row[1] > kept[1]:
            highest[row[0]] = row
    return list(highest.values())


_MANY: dict[str, tuple[bytes, Callable[[list[tuple[Any, ...]]], list[tuple[Any, ...]]]]] = {
    "session": (
        (
            "INSERT INTO sessions SELECT * FROM unnest(%s::text[], %s::text[], %s::text[],"
            " %s::text[], %s::text[], %s::bytea[], %s::text[], %s::int4[], %s::float8[],"
            " %s::float8[])" + _SESSION_UPSERT
        ).encode(),
        _last_of_each,
    ),
    "mark": (
        (
            "INSERT INTO seq_marks SELECT * FROM unnest(%s::text[], %s::int8[])" + _MARK_UPSERT
        ).encode(),
        _highest_of_each,
    ),
}
"""Runs written as one statement with the rows as arrays, not one execution per
row (``executemany`` still sends and executes each row apart): a burst of new
sessions is one statement for their rows and one for their seq marks."""

_TABLE = {"session": "sessions", "state": "sessions", "env_put": "environments",
          "env_delete": "environments"}  # fmt: skip
"""The kinds that share a table (the others each have their own)."""


def _runs(ops: list[Op]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The batch's rows as few statements as keep its meaning: ops on different
    tables commute (no table refers to another), so each table's ops are taken in
    their order, and a run of one kind on a table is one ``executemany`` (one
    round trip, pipelined) instead of one ``execute`` each: a burst of new
    sessions is one statement for their rows and one for their seq marks."""
    tables: dict[str, list[tuple[str, list[tuple[Any, ...]]]]] = {}
    for op in ops:
        if op.kind not in _SQL:
            continue
        runs = tables.setdefault(_TABLE.get(op.kind, op.kind), [])
        if runs and runs[-1][0] == op.kind:
            runs[-1][1].append(_args(op))
        else:
            runs.append((op.kind, [_args(op)]))
    return [run for runs in tables.values() for run in runs]


def redacted(url: str) -> str:
    """The URL to show people: user, host and database, never the password."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable URL)"
    user = params.get("user")
    host = str(params.get("host") or "")
    port = params.get("port")
    where = quote(host, safe="") if host.startswith("/") else host
    where += f":{port}" if port else ""
    return f"postgresql://{f'{user}@' if user else ''}{where}/{params.get('dbname') or ''}"


def conninfo(url: str) -> str:
    params: dict[str, Any] = dict(CONNECT_DEFAULTS)
    params.update(conninfo_to_dict(url))
    return make_conninfo(**params)


def _configure(connection: psycopg.Connection[Any]) -> None:
    connection.execute("SET search_path TO troupe")


def migrate(connection: psycopg.Connection[Any]) -> int:
    """Bring the ``troupe`` schema to the newest version this code knows, in one
    transaction under an advisory lock (servers starting together migrate once)."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        connection.execute("CREATE SCHEMA IF NOT EXISTS troupe")
        connection.execute("SET LOCAL search_path TO troupe")
        connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = connection.execute("SELECT version FROM schema_version").fetchone()
        version = 0 if row is None else int(row[0])
        if version > len(MIGRATIONS):
            raise SchemaTooNew(
                f"the store is at schema version {version}; this Troupe knows up to "
                f"{len(MIGRATIONS)} (it was migrated by a newer Troupe)"
            )
        for script in MIGRATIONS[version:]:
            for statement in (s.strip() for s in script.split(";")):
                if statement:
                    connection.execute(statement.encode())
        if version < len(MIGRATIONS):
            connection.execute("DELETE FROM schema_version")
            connection.execute("INSERT INTO schema_version VALUES (%s)", (len(MIGRATIONS),))
    return len(MIGRATIONS)


def _session_row(row: tuple[Any, ...]) -> SessionRow:
    return SessionRow(
        row[0], row[1], row[2], row[3], row[4], bytes(row[5]), row[6], bool(row[7]),
        row[8], row[9],
    )  # fmt: skip


NOT_AT_REST = f"SELECT * FROM sessions WHERE {not_at_rest()} ORDER BY created"
"""Every state but ``idle`` and ``closed`` as the three ranges around them, as
SQLite's store asks it: ``NOT IN`` (``<>``) is no index condition for PostgreSQL
either, so it read every session row on each start; the ranges are a bitmap scan of
``sessions_by_state``."""


class PostgresBackend:
    """The store's tables in a PostgreSQL database. Open it with :func:`open_postgres`."""

    faults: tuple[type[BaseException], ...] = FAULTS
    serial = False
    path: Path | None = None

    def __init__(self, pool: ConnectionPool[Any], conninfo: str, location: str) -> None:
        self._pool = pool
        self._conninfo = conninfo
        self.location = location
        self._direct = False
        """Set when the pool had no connection to give: until it has one again,
        each call connects by itself (failing at once, with the real reason, while
        the database is down; working as soon as it is back, whatever the pool's
        own reconnection backoff)."""

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection from the pool (or, while the pool has none, of its own)."""
        if not self._direct or self._pool.get_stats().get("pool_available", 0) > 0:
            try:
                with self._pool.connection(timeout=WAIT) as connection:
                    self._direct = False
                    yield connection
                return
            except PoolTimeout:
                self._direct = True
        with psycopg.connect(self._conninfo, autocommit=True) as connection:
            _configure(connection)
            yield connection

    def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self.connection() as connection:
            return connection.execute(sql.encode(), args).fetchall()

    # -- writes

    def apply(self, batch: list[Op]) -> None:
        try:
            with self.connection() as connection:
                _apply(connection, batch)
        except BAD_ROW as error:
            log.error("store batch failed (%s); writing it op by op", error)
            for op in batch:
                try:
                    with self.connection() as connection:
                        _apply(connection, [op])
                except BAD_ROW as bad:
                    log.error("store dropped a %s write it cannot hold: %s", op.kind, bad)

    def recover(self) -> None:
        """Drop the pool's idle connections that died with the server."""
        self._pool.check()

    def probe(self) -> None:
        with self.connection() as connection:
            row = connection.execute("SHOW transaction_read_only").fetchone()
        if row is not None and row[0] == "on":
            raise psycopg.errors.ReadOnlySqlTransaction("the database is read-only (a standby?)")

    def close(self) -> None:
        self._pool.close()

    # -- reads

    def sessions(self) -> list[SessionRow]:
        return [_session_row(r) for r in self._rows("SELECT * FROM sessions ORDER BY created")]

    def session(self, session_id: str) -> SessionRow | None:
        found = self._rows("SELECT * FROM sessions WHERE id=%s", session_id)
        return _session_row(found[0]) if found else None

    def sessions_not_at_rest(self) -> list[SessionRow]:
        found = self._rows(NOT_AT_REST)
        return [_session_row(row) for row in found]

    def summary(self, session_id: str) -> SummaryRow | None:
        found = self._rows("SELECT * FROM summaries WHERE session_id=%s", session_id)
        return SummaryRow(*found[0]) if found else None

    def summaries(self) -> dict[str, SummaryRow]:
        return {row[0]: SummaryRow(*row) for row in self._rows("SELECT * FROM summaries")}

    def seq_mark(self, session_id: str) -> int:
        found = self._rows("SELECT mark FROM seq_marks WHERE session_id=%s", session_id)
        return int(found[0][0]) if found else 0

    def seq_marks(self) -> dict[str, int]:
        return {row[0]: int(row[1]) for row in self._rows("SELECT session_id, mark FROM seq_marks")}

    def max_seq(self, session_id: str) -> int:
        found = self._rows("SELECT MAX(seq) FROM events WHERE session_id=%s", session_id)
        return int(found[0][0] or 0)

    def last_seqs(self) -> dict[str, int]:
        found = self._rows("SELECT session_id, MAX(seq) FROM events GROUP BY session_id")
        return {row[0]: int(row[1]) for row in found}

    def events_after(self, session_id: str, after_seq: int, limit: int) -> list[EventRow]:
        found = self._rows(
            "SELECT * FROM events WHERE session_id=%s AND seq>%s ORDER BY seq LIMIT %s",
            session_id, after_seq, limit,
        )  # fmt: skip
        return [EventRow(r[0], r[1], r[2], r[3], bytes(r[4])) for r in found]

    def events_of_kinds(self, session_id: str, kinds: tuple[str, ...]) -> list[EventRow]:
        found = self._rows(
            "SELECT * FROM events WHERE session_id=%s AND kind = ANY(%s) ORDER BY seq",
            session_id, list(kinds),
        )  # fmt: skip
        return [EventRow(r[0], r[1], r[2], r[3], bytes(r[4])) for r in found]

    def history(self, session_id: str) -> list[bytes]:
        found = self._rows("SELECT turn FROM history WHERE session_id=%s ORDER BY idx", session_id)
        return [bytes(row[0]) for row in found]

    def ledgers(self) -> dict[str, bytes]:
        return {r[0]: bytes(r[1]) for r in self._rows("SELECT session_id, spend FROM ledgers")}

    def ledger(self, session_id: str) -> bytes | None:
        found = self._rows("SELECT spend FROM ledgers WHERE session_id=%s", session_id)
        return bytes(found[0][0]) if found else None

    def subagents(self) -> list[SubagentRow]:
        found = self._rows("SELECT id, parent, address FROM subagents ORDER BY id")
        return [SubagentRow(*row) for row in found]

    def subagents_of(self, parent: str) -> list[SubagentRow]:
        found = self._rows(
            "SELECT id, parent, address FROM subagents WHERE parent=%s ORDER BY id", parent
        )
        return [SubagentRow(*row) for row in found]

    def environments(self) -> list[EnvironmentRow]:
        found = self._rows("SELECT name, kind, spec FROM environments ORDER BY position")
        return [EnvironmentRow(name, kind, bytes(spec)) for name, kind, spec in found]


def open_postgres(url: str) -> PostgresBackend:
    """In a worker thread: a pool on ``url``, the schema migrated. Raises one of
    :data:`FAULTS` when the database cannot be reached now, :class:`SchemaTooNew`
    when a newer Troupe migrated it."""
    info = conninfo(url)
    pool: ConnectionPool[Any] = ConnectionPool(
        info,
        kwargs={"autocommit": True},
        min_size=1,
        max_size=POOL_MAX,
        open=False,
        configure=_configure,
        check=ConnectionPool.check_connection,
        timeout=WAIT,
        name="troupe-store",
    )
    with psycopg.connect(info, autocommit=True) as connection:  # fails at once, saying why
        migrate(connection)
    try:
        pool.open(wait=True, timeout=10)
    except BaseException:
        pool.close()
        raise
    return PostgresBackend(pool, info, redacted(url))
