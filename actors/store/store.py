"""The durable store: sessions, their events and their history, in SQLite (WAL).

Writes are queued without waiting (a session's event sink must never block or
raise) and applied by one writer task in batches, one transaction per batch, in a
worker thread so the event loop never waits on the disk. Readers that must not
get ahead of the disk (the gateway sends a durable event only once it is stored)
wait with :meth:`Store.wait_committed`.

Sequence numbers never go back, even for events that are not stored: a session
reserves numbers in blocks (:meth:`Store.reserve_seqs`, one small write per
block, none per event) and a live-only event is sent only once its number is
reserved on disk (:meth:`Store.wait_reserved`). After a crash, numbering resumes
above the reserved mark, so no number a client saw is ever used again.

A store fault (disk full, a read-only or vanished data directory, an I/O error)
stops writes, not the server: the failed batch stays at the head of the queue and
is tried again with backoff until it goes in (see :mod:`actors.store.health`);
meanwhile reads keep working and nothing queued is dropped.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.store import db
from actors.store.db import EventRow, Op, SessionRow, SubagentRow, SummaryRow
from actors.store.health import StoreCannotOpen, StoreHealth, StoreUnavailable
from actors.store.paths import default_data_dir as default_data_dir
from protocol.events import EventData, SessionEvent
from protocol.session import SessionConfig, Spend, Turn

log = logging.getLogger("troupe.store")

MAX_BATCH = 4096
_turns = msgspec.json.Decoder(Turn)
_spend = msgspec.json.Decoder(Spend)


def _encode_data(data: EventData) -> bytes:
    """An event's fields as JSON (what a frame's ``data`` holds); anything msgspec
    cannot encode (inside free-form tool arguments) is stored as its text."""
    return msgspec.json.encode(data, enc_hook=repr)


_BAD_ROW = (
    OverflowError, ValueError, TypeError,
    sqlite3.InterfaceError, sqlite3.IntegrityError, sqlite3.DataError,
)  # fmt: skip
"""Errors of one row's content (the decoder keeps them out; this is the last net)."""

_FAULT = (sqlite3.Error, OSError)
"""Anything else the database or the file system raises: the store cannot write now."""

RETRY_FIRST = 0.05
RETRY_MAX = 2.0
"""Backoff between attempts at a failed batch, in seconds (doubling up to the max)."""
CLOSING_TRIES = 6
"""Attempts at the queue when the store closes during an outage, before what is
left (never acknowledged to anyone) is given up with an error in the log."""

_SESSION_ARG = {"event": 0, "mark": 0, "session": 0, "state": 3, "summary": 0, "history": 0}


def _session_of(op: Op) -> str | None:
    """The session (or subagent) a queued write belongs to, if any."""
    index = _SESSION_ARG.get(op.kind)
    return None if index is None else op.args[index]


def _apply_each(connection: sqlite3.Connection, batch: list[Op]) -> None:
    for op in batch:
        try:
            db.apply(connection, [op])
        except _BAD_ROW as error:
            log.error("store dropped a %s write it cannot hold: %s", op.kind, error)


class Store:
    """One SQLite database, used from trio. Create it with :func:`open_store`."""

    def __init__(
        self, connection: sqlite3.Connection, path: Path, identity: tuple[int, int] | None = None
    ) -> None:
        self.path = path
        self._connection = connection
        self._identity = identity
        """(device, inode) of the file opened; a write checks it is still there."""
        self.health = StoreHealth()
        self._lock = trio.Lock()
        self._queue: list[Op] = []
        self._queued_seq: dict[str, int] = {}
        self._committed: dict[str, int] = {}
        self._queued_mark: dict[str, int] = {}
        self._committed_mark: dict[str, int] = {}
        self._wake = trio.Event()
        self._progress = trio.Event()
        self._closed = False
        self._writer_running = False
        self.events_written = 0

    # -- writes (never wait, never raise) ------------------------------------

    def append_event(self, event: SessionEvent) -> None:
        """Queue a durable event; ephemeral deltas are not stored. Use as a hub sink."""
        if not event.data.durable or event.seq <= 0:
            return
        row = (event.session_id, event.seq, event.timestamp, event.kind, _encode_data(event.data))
        self._put(Op("event", row))
        self._queued_seq[event.session_id] = event.seq

    def reserve_seqs(self, session_id: str, mark: int) -> None:
        """Queue the session's new high-water mark: numbers up to ``mark`` are taken."""
        if mark <= self._queued_mark.get(session_id, 0):
            return
        if self._put(Op("mark", (session_id, mark))):
            self._queued_mark[session_id] = mark

    def put_session(
        self,
        session_id: str,
        profile: str,
        model: str,
        environment: str,
        working_dir: str | None,
        config: SessionConfig,
        state: str = "idle",
        created: float | None = None,
    ) -> None:
        now = time.time()
        row = (
            session_id, profile, model, environment, working_dir,
            msgspec.json.encode(config), state, 0, created or now, now,
        )  # fmt: skip
        self._put(Op("session", row))

    def put_state(self, session_id: str, state: str, interrupted: bool = False) -> None:
        self._put(Op("state", (state, int(interrupted), time.time(), session_id)))

    def put_summary(self, summary: SummaryRow) -> None:
        """What the session list shows of a session (kept across restarts)."""
        self._put(Op("summary", tuple(msgspec.structs.astuple(summary))))

    def put_history(self, session_id: str, first_index: int, turns: list[Turn]) -> None:
        for offset, turn in enumerate(turns):
            self._put(Op("history", (session_id, first_index + offset, msgspec.json.encode(turn))))

    def put_ledger(self, session_id: str, spend: Spend) -> None:
        """The session's cost ledger as of its last input."""
        self._put(Op("ledger", (session_id, msgspec.json.encode(spend))))

    def put_subagent(self, subagent_id: str, parent: str, address: str) -> None:
        """Remember a subagent (whose events are stored under ``subagent_id``)."""
        self._put(Op("subagent", (subagent_id, parent, address)))

    def put_environment(self, name: str, kind: str, spec: bytes) -> None:
        """Remember an added environment: its kind and JSON spec (no secret in it)."""
        self._put(Op("environment_put", (name, kind, spec)))

    def delete_environment(self, name: str) -> None:
        self._put(Op("environment_delete", (name,)))

    def _put(self, op: Op) -> bool:
        if self._closed:
            log.warning("store closed; dropping %s write", op.kind)
            return False
        self._queue.append(op)
        self._wake.set()
        if not self.health.available:
            session_id = _session_of(op)
            if session_id is not None:
                self.health.need(session_id)
        return True

    # -- waiting for the disk ------------------------------------------------

    def committed(self, session_id: str) -> int:
        return self._committed.get(session_id, 0)

    async def wait_committed(self, session_id: str, seq: int) -> None:
        """Return once every queued event of ``session_id`` up to ``seq`` is on disk
        (through an outage: the writer keeps trying). Raises
        :class:`StoreUnavailable` if the store closed before it could write them."""
        target = min(seq, self._queued_seq.get(session_id, 0))
        while self._committed.get(session_id, 0) < target:
            if not await self._await_progress():
                raise StoreUnavailable(f"the store closed before event {seq} was written")

    async def wait_reserved(self, session_id: str, seq: int) -> None:
        """Return once ``seq`` is at or below a high-water mark that is on disk."""
        target = min(seq, self._queued_mark.get(session_id, 0))
        while self._committed_mark.get(session_id, 0) < target:
            if not await self._await_progress():
                raise StoreUnavailable(f"the store closed before seq {seq} was reserved")

    async def flush(self) -> None:
        """Return once everything queued so far is committed."""
        while self._queue and await self._await_progress():
            pass

    async def _await_progress(self) -> bool:
        """Wait for the writer's next batch; once the writer has stopped (the scope
        around the store was cancelled), write the next batch here, so what
        sessions queue while they shut down is still saved and no waiter waits for
        a writer that is gone. False when there is nothing left to wait for."""
        if self._writer_running:
            await self._progress.wait()
            return True
        if self._queue:
            return await self._write_batch() or (not self._closed and await self._backoff(0))
        return False

    async def _backoff(self, attempt: int) -> bool:
        await trio.sleep(min(RETRY_FIRST * 2**attempt, RETRY_MAX))
        return True

    # -- the writer ----------------------------------------------------------

    async def run_writer(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED):
        self._writer_running = True
        task_status.started()
        try:
            failures = 0
            while True:
                if not self._queue and self.health.available:
                    self._wake = trio.Event()
                    await self._wake.wait()
                if not self._queue:  # down with nothing queued: look for its return
                    if await self._probe():
                        failures = 0
                    else:
                        await self._backoff(failures)
                        failures += 1
                elif await self._write_batch():
                    failures = 0
                else:  # an outage: the batch stays queued, tried again after a pause
                    await self._backoff(failures)
                    failures += 1
        finally:
            with trio.CancelScope(shield=True):
                await self._drain_closing()
            self._writer_running = False
            self._progress.set()  # waiters look again, and write for themselves

    async def _drain_closing(self) -> None:
        """Write what is queued as the store closes; during an outage, a few more
        attempts, then what is left is given up (no client was told it is stored)."""
        failures = 0
        while self._queue:
            if await self._write_batch():
                continue
            failures += 1
            if failures >= CLOSING_TRIES:
                log.error(
                    "store closing while it cannot write (%s): %d queued writes, never "
                    "acknowledged to a client, are not stored",
                    self.health.reason, len(self._queue),
                )  # fmt: skip
                self._queue = []
                return
            await self._backoff(failures)

    async def _write_batch(self) -> bool:
        """Write the head of the queue in one transaction; False (the batch still
        queued, the health told) if the store cannot write now."""
        async with self._lock:
            batch = self._queue[:MAX_BATCH]
            if not batch:
                return True
            try:
                await trio.to_thread.run_sync(self._apply_checked, batch)
            except _FAULT as error:
                self._fault(error)
                return False
            del self._queue[: len(batch)]
        if not self.health.available:
            log.warning("store writes again after: %s", self.health.reason)
            self.health.recover()
        for op in batch:
            if op.kind == "event":
                session_id, seq = op.args[0], op.args[1]
                if seq > self._committed.get(session_id, 0):
                    self._committed[session_id] = seq
                self.events_written += 1
            elif op.kind == "mark":
                session_id, mark = op.args
                if mark > self._committed_mark.get(session_id, 0):
                    self._committed_mark[session_id] = mark
        progress, self._progress = self._progress, trio.Event()
        progress.set()
        return True

    async def _probe(self) -> bool:
        """Whether the store can write again (nothing queued to try it with)."""
        async with self._lock:
            try:
                await trio.to_thread.run_sync(self._reconnect_and_probe)
            except _FAULT as error:
                self._fault(error)
                return False
        if not self.health.available:
            log.warning("store writes again after: %s", self.health.reason)
            self.health.recover()
        return True

    def close_connection(self) -> None:
        """In a worker thread, once the writer has stopped: the connection in use
        (a fault may have replaced the one the store was opened with)."""
        self._connection.close()

    def _reconnect_and_probe(self) -> None:
        self._reconnect()
        db.probe(self._connection)

    def _reconnect(self) -> None:
        """A new connection after a fault: SQLite keeps a connection opened on a
        read-only file read-only, and one whose file vanished writes into the void."""
        connection = db.reopen(self.path)
        old, self._connection = self._connection, connection
        self._identity = db.identity(self.path)
        with contextlib.suppress(sqlite3.Error):
            old.close()

    def _apply_checked(self, batch: list[Op]) -> None:
        """In the worker thread: check the database is still at its path, then
        apply the batch. Applying a batch again after a fault is harmless (events
        are inserted once, marks only grow, the rest is replaced in order)."""
        if not self.health.available:
            self._reconnect()
        self._check_file()
        try:
            db.apply(self._connection, batch)
        except _BAD_ROW as error:
            # The writer is every session's durability: one row SQLite cannot hold
            # must not stop it. Apply the batch op by op, dropping only the bad.
            log.error("store batch failed (%s); writing it op by op", error)
            _apply_each(self._connection, batch)

    def _check_file(self) -> None:
        """A vanished database file (its directory removed or unmounted) would take
        writes into a file no one will open again: refuse them until a database is
        back at the path, then write there on a new connection."""
        if self._identity is None:
            return
        try:
            found = db.identity(self.path)
        except FileNotFoundError:
            raise db.StoreGone(f"{self.path} is gone (its data directory vanished?)") from None
        if found != self._identity:
            connection = db.reopen(self.path)
            old, self._connection, self._identity = self._connection, connection, found
            with contextlib.suppress(sqlite3.Error):
                old.close()
            log.warning("store reopened %s (the file there changed)", self.path)

    def _fault(self, error: Exception) -> None:
        reason = str(error) or type(error).__name__
        if self.health.available or reason != self.health.reason:
            log.error("store cannot write (%s); retrying, writes wait", reason)
        sessions = {s for op in self._queue if (s := _session_of(op)) is not None}
        self.health.fail(reason, sessions)

    # -- reads ---------------------------------------------------------------

    async def _read(self, fn: Any, *args: Any) -> Any:
        """A read on the store's connection; a failure of the disk under it is the
        typed fault of the one request that asked, never the server's end."""
        async with self._lock:
            try:
                return await trio.to_thread.run_sync(fn, self._connection, *args)
            except _FAULT as error:
                raise StoreUnavailable(f"the store cannot be read: {error}") from error

    async def sessions(self) -> list[SessionRow]:
        return await self._read(db.sessions)

    async def session(self, session_id: str) -> SessionRow | None:
        return await self._read(db.session, session_id)

    async def sessions_not_at_rest(self) -> list[SessionRow]:
        return await self._read(db.sessions_not_at_rest)

    async def summary(self, session_id: str) -> SummaryRow | None:
        return await self._read(db.summary, session_id)

    async def seq_mark(self, session_id: str) -> int:
        mark: int = await self._read(db.seq_mark, session_id)
        self._committed_mark[session_id] = max(self._committed_mark.get(session_id, 0), mark)
        self._queued_mark[session_id] = max(self._queued_mark.get(session_id, 0), mark)
        return mark

    async def subagents_of(self, parent: str) -> list[SubagentRow]:
        return await self._read(db.subagents_of, parent)

    async def summaries(self) -> dict[str, SummaryRow]:
        return await self._read(db.summaries)

    async def last_seqs(self) -> dict[str, int]:
        seqs = await self._read(db.last_seqs)
        for session_id, seq in seqs.items():
            self._committed[session_id] = max(self._committed.get(session_id, 0), seq)
        return seqs

    async def max_seq(self, session_id: str) -> int:
        """The highest seq stored of one session (0 for none): one index seek."""
        seq: int = await self._read(db.max_seq, session_id)
        if seq > self._committed.get(session_id, 0):
            self._committed[session_id] = seq
        return seq

    async def seq_marks(self) -> dict[str, int]:
        marks: dict[str, int] = await self._read(db.seq_marks)
        for session_id, mark in marks.items():
            self._committed_mark[session_id] = max(self._committed_mark.get(session_id, 0), mark)
            self._queued_mark[session_id] = max(self._queued_mark.get(session_id, 0), mark)
        return marks

    async def events_after(
        self, session_id: str, after_seq: int, limit: int = 512
    ) -> list[EventRow]:
        return await self._read(db.events_after, session_id, after_seq, limit)

    async def events_of_kinds(self, session_id: str, *kinds: str) -> list[EventRow]:
        return await self._read(db.events_of_kinds, session_id, kinds)

    async def ledgers(self) -> dict[str, Spend]:
        blobs: dict[str, bytes] = await self._read(db.ledgers)
        found: dict[str, Spend] = {}
        for session_id, blob in blobs.items():
            try:
                found[session_id] = _spend.decode(blob)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
        return found

    async def ledger(self, session_id: str) -> Spend | None:
        """One session's ledger (None before its first input, or if unreadable)."""
        blob: bytes | None = await self._read(db.ledger, session_id)
        if blob is None:
            return None
        try:
            return _spend.decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    async def subagents(self) -> list[SubagentRow]:
        return await self._read(db.subagents)

    async def environments(self) -> list[db.EnvironmentRow]:
        """Every added environment (name, kind, JSON spec), oldest first."""
        return await self._read(db.environments)

    async def history(self, session_id: str) -> list[Turn]:
        blobs = await self._read(db.history, session_id)
        return [_turns.decode(blob) for blob in blobs]

    def close(self) -> None:
        self._closed = True


@asynccontextmanager
async def open_store(data_dir: Path) -> AsyncIterator[Store]:
    """Open (creating if needed) ``troupe.db`` in ``data_dir``; on exit, everything
    queued is written before the database is closed."""
    path = data_dir / "troupe.db"
    fault: Exception | None = None
    try:
        connection = await trio.to_thread.run_sync(db.connect, path)
    except _FAULT as error:
        # A data directory read-only from the start: up, reading, writes refused
        # (and tried again) until it can write. Without a database, no server.
        fault = error
        try:
            connection = await trio.to_thread.run_sync(db.open_read_only, path)
            await trio.to_thread.run_sync(db.sessions, connection)
        except _FAULT:
            raise StoreCannotOpen(f"cannot open the store {path}: {error}") from error
    identity = await trio.to_thread.run_sync(db.identity, path)
    store = Store(connection, path, identity)
    if fault is None:
        try:
            await trio.to_thread.run_sync(db.probe, connection)
        except _FAULT as error:
            fault = error
    if fault is not None:
        store._fault(fault)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.run_writer)
            try:
                yield store
            finally:
                # The writer writes what is queued as it stops (a few attempts more
                # during an outage: closing never waits for the disk to come back).
                store.close()
                nursery.cancel_scope.cancel()
    finally:
        await trio.to_thread.run_sync(store.close_connection)
