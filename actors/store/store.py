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
"""

from __future__ import annotations

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
from actors.store.paths import default_data_dir as default_data_dir
from protocol.events import EventData, SessionEvent
from protocol.session import SessionConfig, Turn

log = logging.getLogger("troupe.store")

MAX_BATCH = 4096
_turns = msgspec.json.Decoder(Turn)


def _encode_data(data: EventData) -> bytes:
    """An event's fields as JSON (what a frame's ``data`` holds); anything msgspec
    cannot encode (inside free-form tool arguments) is stored as its text."""
    return msgspec.json.encode(data, enc_hook=repr)


_BAD_ROW = (
    OverflowError, ValueError, TypeError,
    sqlite3.InterfaceError, sqlite3.IntegrityError, sqlite3.DataError,
)  # fmt: skip
"""Errors of one row's content (the decoder keeps them out; this is the last net)."""


def _apply_each(connection: sqlite3.Connection, batch: list[Op]) -> None:
    for op in batch:
        try:
            db.apply(connection, [op])
        except _BAD_ROW as error:
            log.error("store dropped a %s write it cannot hold: %s", op.kind, error)


class Store:
    """One SQLite database, used from trio. Create it with :func:`open_store`."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self._connection = connection
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

    def put_subagent(self, subagent_id: str, parent: str, address: str) -> None:
        """Remember a subagent (whose events are stored under ``subagent_id``)."""
        self._put(Op("subagent", (subagent_id, parent, address)))

    def put_ssh_environment(self, name: str, spec: bytes) -> None:
        """Remember an SSH environment (its request, which holds no secret)."""
        self._put(Op("ssh_put", (name, spec)))

    def delete_ssh_environment(self, name: str) -> None:
        self._put(Op("ssh_delete", (name,)))

    def _put(self, op: Op) -> bool:
        if self._closed:
            log.warning("store closed; dropping %s write", op.kind)
            return False
        self._queue.append(op)
        self._wake.set()
        return True

    # -- waiting for the disk ------------------------------------------------

    def committed(self, session_id: str) -> int:
        return self._committed.get(session_id, 0)

    async def wait_committed(self, session_id: str, seq: int) -> None:
        """Return once every queued event of ``session_id`` up to ``seq`` is on disk."""
        target = min(seq, self._queued_seq.get(session_id, 0))
        while self._committed.get(session_id, 0) < target and await self._await_progress():
            pass

    async def wait_reserved(self, session_id: str, seq: int) -> None:
        """Return once ``seq`` is at or below a high-water mark that is on disk."""
        target = min(seq, self._queued_mark.get(session_id, 0))
        while self._committed_mark.get(session_id, 0) < target and await self._await_progress():
            pass

    async def flush(self) -> None:
        """Return once everything queued so far is committed."""
        targets = dict(self._queued_seq)
        for session_id, seq in targets.items():
            await self.wait_committed(session_id, seq)
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
            await self._write_batch()
            return True
        return False

    # -- the writer ----------------------------------------------------------

    async def run_writer(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED):
        self._writer_running = True
        task_status.started()
        try:
            while True:
                if not self._queue:
                    self._wake = trio.Event()
                    await self._wake.wait()
                await self._write_batch()
        finally:
            with trio.CancelScope(shield=True):
                while self._queue:
                    await self._write_batch()
            self._writer_running = False
            self._progress.set()  # waiters look again, and write for themselves

    async def _write_batch(self) -> None:
        batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
        async with self._lock:
            try:
                await trio.to_thread.run_sync(db.apply, self._connection, batch)
            except _BAD_ROW as error:
                # The writer is every session's durability: one row SQLite cannot
                # hold must not stop it. Apply the batch op by op, dropping only
                # the bad (a disk error still stops the server: nothing is lost).
                log.error("store batch failed (%s); writing it op by op", error)
                await trio.to_thread.run_sync(_apply_each, self._connection, batch)
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

    # -- reads ---------------------------------------------------------------

    async def _read(self, fn: Any, *args: Any) -> Any:
        async with self._lock:
            return await trio.to_thread.run_sync(fn, self._connection, *args)

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

    async def subagents(self) -> list[SubagentRow]:
        return await self._read(db.subagents)

    async def ssh_environments(self) -> list[tuple[str, bytes]]:
        return await self._read(db.ssh_environments)

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
    connection = await trio.to_thread.run_sync(db.connect, path)
    store = Store(connection, path)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.run_writer)
            try:
                yield store
            finally:
                store.close()
                with trio.CancelScope(shield=True):
                    await store.flush()
                nursery.cancel_scope.cancel()
    finally:
        await trio.to_thread.run_sync(connection.close)
