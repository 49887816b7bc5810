"""The durable store: sessions, their events and their history, in one of the
backends of :mod:`actors.store.backend` (SQLite by default, or PostgreSQL).

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
meanwhile reads keep working (as long as the database can be read: a PostgreSQL
that is down cannot) and nothing queued is dropped.

All of this is the same for every backend: a backend only applies a batch in
one transaction and reads, synchronously, in a worker thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import msgspec
import trio

from actors.store.backend import FencedOut, SchemaTooNew, StoreBackend
from actors.store.health import SessionMoved, StoreCannotOpen, StoreHealth, StoreUnavailable
from actors.store.paths import default_data_dir as default_data_dir
from actors.store.rows import EnvironmentRow, EventRow, Op, SessionRow, SubagentRow, SummaryRow
from actors.store.setting import check_store_setting, is_postgres
from protocol.events import EventData, SessionEvent
from protocol.session import SessionConfig, Spend, Turn

log = logging.getLogger("troupe.store")

MAX_BATCH = 4096


def _encode_data(data: EventData) -> bytes:
    """An event's fields as JSON (what a frame's ``data`` holds); anything msgspec
    cannot encode (inside free-form tool arguments) is stored as its text."""
    return msgspec.json.encode(data, enc_hook=repr)


RETRY_FIRST = 0.05
RETRY_MAX = 2.0
"""Backoff between attempts at a failed batch, in seconds (doubling up to the max)."""
CLOSING_TRIES = 6
"""Attempts at the queue when the store closes during an outage, before what is
left (never acknowledged to anyone) is given up with an error in the log."""

_SESSION_ARG = {"event": 0, "mark": 0, "session": 0, "state": 3, "summary": 0, "history": 0,
                "lease": 0}  # fmt: skip


def _session_of(op: Op) -> str | None:
    """The session (or subagent) a queued write belongs to, if any."""
    index = _SESSION_ARG.get(op.kind)
    return None if index is None else op.args[index]


class Fence(Protocol):
    """What fences a fleet node's writes (:class:`actors.store.ownership.Ownership`)."""

    def apply(self, batch: list[Op]) -> None: ...
    def drops(self, session_id: str) -> bool: ...


class Store:
    """The store, used from trio, on one backend. Create it with :func:`open_store`."""

    def __init__(self, backend: StoreBackend) -> None:
        self.backend = backend
        self.path = backend.path
        """The database file (SQLite); None for a database server."""
        self.location = backend.location
        """Where the data is, for people (a path, or a URL without its password)."""
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
        self._connection_closed = False
        """Set, under the lock, as the database closes: a read that comes later (a
        task that outlived the store) gets the typed fault, not a closed handle."""
        self._writer_running = False
        self.events_written = 0
        self.fence: Fence | None = None
        """On a fleet (PostgreSQL): every batch goes through this node's leases,
        and writes of sessions it no longer owns are dropped (issue 37)."""
        self.on_fenced: Any = None
        """Told (with the session id) when a batch was refused: the session moved."""
        self.side_probes: list[Callable[[], None]] = []
        """The small files beside the store (the server's process ledger): each
        raises :class:`OSError` while it cannot be written. During an outage they
        are probed with the store, so writes resume only once all can."""

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
        config: SessionConfig | bytes,
        state: str = "idle",
        created: float | None = None,
    ) -> None:
        """``config``: the session's config, or its JSON already encoded."""
        now = time.time()
        encoded = config if isinstance(config, bytes) else msgspec.json.encode(config)
        row = (
            session_id, profile, model, environment, working_dir,
            encoded, state, 0, created or now, now,
        )  # fmt: skip
        self._put(Op("session", row))

    def put_state(
        self, session_id: str, state: str, interrupted: bool = False, when: float | None = None
    ) -> None:
        """A session's new state, changed at ``when`` (now if not given): the
        "updated" time the list shows, the same before and after a restart."""
        updated = time.time() if when is None else when
        self._put(Op("state", (state, int(interrupted), updated, session_id)))

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
        """Remember an environment: its kind and its request as the kind encodes
        it (holding no secret). A name put again is replaced, keeping its place."""
        self._put(Op("env_put", (name, kind, spec)))

    def delete_environment(self, name: str) -> None:
        self._put(Op("env_delete", (name,)))

    def put_lease(self, session_id: str) -> None:
        """On a fleet: write a new session's lease (epoch 1) before its first rows,
        in their batch (:meth:`actors.store.ownership.Ownership.adopt`)."""
        self._put(Op("lease", (session_id,)))

    def _put(self, op: Op) -> bool:
        if self._closed:
            log.warning("store closed; dropping %s write", op.kind)
            return False
        if self.fence is not None:
            owner = _session_of(op)
            if owner is not None and self.fence.drops(owner):
                return False  # another node owns the session now: never written here
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
            self._check_moved(session_id)
            if not await self._await_progress():
                raise StoreUnavailable(f"the store closed before event {seq} was written")

    async def wait_reserved(self, session_id: str, seq: int) -> None:
        """Return once ``seq`` is at or below a high-water mark that is on disk."""
        target = min(seq, self._queued_mark.get(session_id, 0))
        while self._committed_mark.get(session_id, 0) < target:
            self._check_moved(session_id)
            if not await self._await_progress():
                raise StoreUnavailable(f"the store closed before seq {seq} was reserved")

    def _check_moved(self, session_id: str) -> None:
        if self.fence is not None and self.fence.drops(session_id):
            raise SessionMoved(f"session {session_id} is owned by another node now")

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
            if self._connection_closed:
                return False  # a waiter that outlived the store: nothing can write now
            down = not self.health.available  # then the batch probes all first
            try:
                await trio.to_thread.run_sync(self._apply, batch)
            except FencedOut as out:
                self._drop_moved(out.session_id)
                return True
            except self.backend.faults as error:
                self._fault(error)
                return False
            del self._queue[: len(batch)]
        if down and not self.health.available:  # not a fault told during the batch
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

    def _drop_moved(self, session_id: str) -> None:
        """A batch was refused: ``session_id`` is another node's now. Its queued
        writes go (never acknowledged to anyone), the rest is tried again."""
        assert self.fence is not None
        fence = self.fence
        kept = [op for op in self._queue if (s := _session_of(op)) is None or not fence.drops(s)]
        dropped = len(self._queue) - len(kept)
        self._queue = kept
        log.warning(
            "session %s was taken over by another node: %d writes of it dropped",
            session_id, dropped,
        )  # fmt: skip
        progress, self._progress = self._progress, trio.Event()
        progress.set()  # its waiters learn it moved
        if self.on_fenced is not None:
            self.on_fenced(session_id)

    async def _probe(self) -> bool:
        """Whether the store can write again (nothing queued to try it with)."""
        async with self._lock:
            try:
                await trio.to_thread.run_sync(self._recover_and_probe)
            except self.backend.faults as error:
                self._fault(error)
                return False
        if not self.health.available:
            log.warning("store writes again after: %s", self.health.reason)
            self.health.recover()
        return True

    async def close_connection(self) -> None:
        """Once the writer has stopped: close the database, after any read still in
        its thread. Tasks outside the store's scope (a subscriber of an embedded
        runtime) may be reading as it closes, and SQLite closed under a running
        statement is a use-after-free that takes the whole process down."""
        with trio.CancelScope(shield=True):
            async with self._lock:
                self._connection_closed = True
                await trio.to_thread.run_sync(self.backend.close)

    def _recover_and_probe(self) -> None:
        self.backend.recover()
        self.backend.probe()
        self._probe_side()

    def _probe_side(self) -> None:
        for probe in self.side_probes:
            probe()

    def _apply(self, batch: list[Op]) -> None:
        """In the worker thread: after a fault, let the backend reconnect first."""
        if not self.health.available:
            self.backend.recover()
            self._probe_side()
        if self.fence is not None:
            self.fence.apply(batch)
        else:
            self.backend.apply(batch)

    def _fault(self, error: BaseException) -> None:
        reason = " ".join(str(error).split()) or type(error).__name__  # one line
        if self.health.available or reason != self.health.reason:
            log.error("store cannot write (%s); retrying, writes wait", reason)
        sessions = {s for op in self._queue if (s := _session_of(op)) is not None}
        self.health.fail(reason, sessions)

    # -- reads ---------------------------------------------------------------

    def _check_open(self) -> None:
        if self._connection_closed:
            raise StoreUnavailable("the store is closed")

    async def _read(self, fn: Any, *args: Any) -> Any:
        """A read of the backend's (``fn``, one of its methods); a failure of the
        database under it is the typed fault of the one request that asked, never
        the server's end. A backend on one connection reads between batches."""
        try:
            if not self.backend.serial:
                self._check_open()
                return await trio.to_thread.run_sync(fn, *args)
            async with self._lock:
                self._check_open()
                return await trio.to_thread.run_sync(fn, *args)
        except self.backend.faults as error:
            raise StoreUnavailable(f"the store cannot be read: {error}") from error

    async def sessions(self) -> list[SessionRow]:
        return await self._read(self.backend.sessions)

    async def session(self, session_id: str) -> SessionRow | None:
        return await self._read(self.backend.session, session_id)

    async def sessions_not_at_rest(self) -> list[SessionRow]:
        return await self._read(self.backend.sessions_not_at_rest)

    async def summary(self, session_id: str) -> SummaryRow | None:
        return await self._read(self.backend.summary, session_id)

    async def seq_mark(self, session_id: str) -> int:
        mark: int = await self._read(self.backend.seq_mark, session_id)
        self._committed_mark[session_id] = max(self._committed_mark.get(session_id, 0), mark)
        self._queued_mark[session_id] = max(self._queued_mark.get(session_id, 0), mark)
        return mark

    async def subagents_of(self, parent: str) -> list[SubagentRow]:
        return await self._read(self.backend.subagents_of, parent)

    async def summaries(self) -> dict[str, SummaryRow]:
        return await self._read(self.backend.summaries)

    async def last_seqs(self) -> dict[str, int]:
        seqs = await self._read(self.backend.last_seqs)
        for session_id, seq in seqs.items():
            self._committed[session_id] = max(self._committed.get(session_id, 0), seq)
        return seqs

    async def max_seq(self, session_id: str) -> int:
        """The highest seq stored of one session (0 for none): one index seek."""
        seq: int = await self._read(self.backend.max_seq, session_id)
        if seq > self._committed.get(session_id, 0):
            self._committed[session_id] = seq
        return seq

    async def seq_marks(self) -> dict[str, int]:
        marks: dict[str, int] = await self._read(self.backend.seq_marks)
        for session_id, mark in marks.items():
            self._committed_mark[session_id] = max(self._committed_mark.get(session_id, 0), mark)
            self._queued_mark[session_id] = max(self._queued_mark.get(session_id, 0), mark)
        return marks

    async def events_after(
        self, session_id: str, after_seq: int, limit: int = 512
    ) -> list[EventRow]:
        return await self._read(self.backend.events_after, session_id, after_seq, limit)

    async def events_of_kinds(self, session_id: str, *kinds: str) -> list[EventRow]:
        return await self._read(self.backend.events_of_kinds, session_id, kinds)

    async def ledgers(self) -> dict[str, Spend]:
        blobs: dict[str, bytes] = await self._read(self.backend.ledgers)
        found: dict[str, Spend] = {}
        for session_id, blob in blobs.items():
            try:
                found[session_id] = msgspec.json.decode(blob, type=Spend)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
        return found

    async def ledger(self, session_id: str) -> Spend | None:
        """One session's ledger (None before its first input, or if unreadable)."""
        blob: bytes | None = await self._read(self.backend.ledger, session_id)
        if blob is None:
            return None
        try:
            return msgspec.json.decode(blob, type=Spend)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    async def subagents(self) -> list[SubagentRow]:
        return await self._read(self.backend.subagents)

    async def environments(self) -> list[EnvironmentRow]:
        """Every registered environment, in the order first added."""
        return await self._read(self.backend.environments)

    async def history(self, session_id: str) -> list[Turn]:
        blobs = await self._read(self.backend.history, session_id)
        return [msgspec.json.decode(blob, type=Turn) for blob in blobs]

    def close(self) -> None:
        self._closed = True


async def _open_backend(data_dir: Path, store: str) -> tuple[StoreBackend, BaseException | None]:
    """The backend ``store`` names, opened in a worker thread, and the fault it
    opened with (a read-only SQLite directory opens, reading). Without a database
    at all: :class:`StoreCannotOpen`."""
    if is_postgres(store):
        try:
            from actors.store.postgres import FAULTS, open_postgres, redacted
        except ImportError as error:
            raise StoreCannotOpen(
                f"the PostgreSQL store needs psycopg ({error}): "
                "pip install 'troupe-agents[postgres]'"
            ) from error

        try:
            return await trio.to_thread.run_sync(open_postgres, store), None
        except (*FAULTS, SchemaTooNew) as error:
            reason = " ".join(str(error).split())
            raise StoreCannotOpen(f"cannot open the store {redacted(store)}: {reason}") from error
    from actors.store.sqlite import FAULTS, open_sqlite

    try:
        return await trio.to_thread.run_sync(open_sqlite, data_dir)
    except (*FAULTS, SchemaTooNew) as error:
        path = data_dir / "troupe.db"
        raise StoreCannotOpen(f"cannot open the store {path}: {error}") from error


@asynccontextmanager
async def open_store(data_dir: Path, store: str = "") -> AsyncIterator[Store]:
    """Open (creating and migrating if needed) the store: ``troupe.db`` in
    ``data_dir`` by default, or the PostgreSQL database of a ``postgresql://``
    URL; on exit, everything queued is written before the database is closed."""
    backend, fault = await _open_backend(data_dir, check_store_setting(store))
    opened = Store(backend)
    if fault is not None:
        opened._fault(fault)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(opened.run_writer)
            try:
                yield opened
            finally:
                # The writer writes what is queued as it stops (a few attempts more
                # during an outage: closing never waits for the disk to come back).
                opened.close()
                nursery.cancel_scope.cancel()
    finally:
        await opened.close_connection()
