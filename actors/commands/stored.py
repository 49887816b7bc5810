"""Sessions as the store on disk knows them, read without starting anything.

``troupe sessions`` and ``troupe run --continue`` need each session's task, its
directory and the time of its last event; the store holds all three. The database
is opened read-only (SQLite WAL lets a reader sit beside a running server), so
listing never creates a store or disturbs one. The last event and the task come
from small tables the store keeps (``last_events``, ``summaries``); only a session
without a summary's task costs a seek in the events' key (its first input), so the
listing never reads a session's events, however many it has.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec

from protocol.spend import Spend

_FIRST_INPUT = """
       m.task,
       CASE WHEN m.task IS NULL OR m.task = '' THEN
           (SELECT data FROM events e WHERE e.session_id = s.id AND e.kind = 'user_input'
            ORDER BY seq LIMIT 1)
       END
"""
QUERY = f"""
SELECT s.id, s.profile, s.model, s.working_dir, s.state, s.interrupted,
       s.created, s.updated, l.timestamp, l.seq, {_FIRST_INPUT}
FROM sessions s LEFT JOIN summaries m ON m.session_id = s.id
LEFT JOIN last_events l ON l.session_id = s.id
"""
"""Each column a seek in a small table: the last event's time and seq from
``last_events`` (the store keeps it with every batch of events), the task from the
summary (the first input, as the server stored it beside the event,
:mod:`actors.server.summaries`). Only where a session has no summary with a task
is the first input read from the events, and decoded here."""

QUERY_BEFORE_LAST_EVENTS = f"""
SELECT s.id, s.profile, s.model, s.working_dir, s.state, s.interrupted,
       s.created, s.updated,
       (SELECT timestamp FROM events e WHERE e.session_id = s.id ORDER BY seq DESC LIMIT 1),
       (SELECT MAX(seq) FROM events e WHERE e.session_id = s.id),
       {_FIRST_INPUT}
FROM sessions s LEFT JOIN summaries m ON m.session_id = s.id
"""
"""The same for a store no Troupe with ``last_events`` has opened yet (listing
opens it read-only and never migrates it): two seeks per session in the events'
key."""


class StoredSession(msgspec.Struct, frozen=True):
    session_id: str
    profile: str
    model: str
    working_dir: str | None
    state: str
    interrupted: bool
    created: float
    updated: float
    """The last event's time (the row's own time when it has no events)."""
    last_seq: int
    task: str
    """The first input, which is what the session was started for."""
    spend: Spend | None = None
    """Its cost ledger as of its last input (None before any)."""


def read_stored(data_dir: Path) -> list[StoredSession]:
    """Every stored session, in no order (each caller sorts as it shows them:
    sorting here too cost a tenth of listing ten thousand); blocking, for a caller
    with no event loop to keep running."""
    return _read(data_dir / "troupe.db")


def _read(path: Path) -> list[StoredSession]:
    if not path.is_file():
        return []
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        rows = _rows(connection)
        ledgers = _ledgers(connection)
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            return []
        raise
    finally:
        connection.close()
    found = []
    for row in rows:
        (sid, profile, model, workdir, state, interrupted, created, updated,
         last_time, last_seq, task, first_input) = row  # fmt: skip
        if first_input:
            task = str(msgspec.json.decode(first_input).get("content", ""))
        task = task or ""
        found.append(
            StoredSession(
                sid,
                profile,
                model,
                workdir,
                state,
                bool(interrupted),
                created,
                max(updated, last_time or 0.0),
                last_seq or 0,
                task,
                ledgers.get(sid),
            )
        )
    return found


def _rows(connection: sqlite3.Connection) -> list[tuple]:  # type: ignore[type-arg]
    try:
        return connection.execute(QUERY).fetchall()
    except sqlite3.OperationalError as error:
        if "no such table: last_events" not in str(error):
            raise
    return connection.execute(QUERY_BEFORE_LAST_EVENTS).fetchall()


def _ledgers(connection: sqlite3.Connection) -> dict[str, Spend]:
    """Each session's stored cost ledger (none in a store older than ledgers)."""
    try:
        rows = connection.execute("SELECT session_id, spend FROM ledgers").fetchall()
    except sqlite3.OperationalError:
        return {}
    found: dict[str, Spend] = {}
    decode = msgspec.json.Decoder(Spend).decode  # one decoder: a third of the per-call cost
    for session_id, blob in rows:
        try:
            found[session_id] = decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return found


async def stored_sessions(data_dir: Path) -> list[StoredSession]:
    """Every stored session, in no order (:func:`read_stored`)."""
    import trio

    return await trio.to_thread.run_sync(read_stored, data_dir)


def newest_in(data_dir: Path, working_dir: Path) -> StoredSession | None:
    """The session last updated among those started in ``working_dir`` (resolved);
    blocking, like :func:`read_stored`."""
    here = str(working_dir)
    mine = [s for s in read_stored(data_dir) if s.working_dir == here]
    return max(mine, key=lambda s: s.updated, default=None)


async def latest_in(data_dir: Path, working_dir: Path) -> StoredSession | None:
    """:func:`newest_in` off the event loop (``run --continue``)."""
    import trio

    return await trio.to_thread.run_sync(newest_in, data_dir, working_dir)


LAST = "last"
"""The session argument of ``troupe export`` and ``troupe audit`` that names the
newest session started in the current directory (as ``run --continue`` does)."""


def named_session(given: str, data_dir: Path) -> str:
    """``given`` itself, or for :data:`LAST` the id of the session last updated
    among those started here; raises LookupError when there is none."""
    if given != LAST:
        return given
    here = Path.cwd().resolve()
    latest = newest_in(data_dir, here)
    if latest is None:
        raise LookupError(f"no session was started in {here}")
    return latest.session_id
