"""This node's share of a fleet on one PostgreSQL: the leases it holds, and the
fence on every write it makes (issue 37).

A node owns a session while it holds the session's lease
(:mod:`actors.store.leases`). The store's writer hands each batch to
:meth:`Ownership.apply` instead of the backend: in the batch's own transaction,
the lease row of every session the batch touches (a subagent's writes count as
its session's) is read ``FOR SHARE`` and must still name this node and its
epoch. If one does not, another node has taken that session over: the batch is
refused whole (:class:`~actors.store.backend.FencedOut`), the session is marked
lost here, the store drops its writes and tries the rest again. So a node that
was paused or cut off past its lease never writes a byte for that session,
whatever it still believes.

A new session's lease is written by the writer too, in the transaction of the
batch that holds its first rows (a ``lease`` op queued before them:
:meth:`Ownership.adopt`), one statement for every new session of the batch: a
start costs no round trip of its own to the database. Its id is new, so its
lease is epoch 1 before it is written; nothing of it reaches the database
before its lease, and until the lease is written it is not renewed.

Writes of a session this node never owned (a stored session's summary, counted
once when it is first listed) carry no fence; writes of one it owned and lost
(or handed over) are dropped before they reach the database.

Each committed batch rings ``troupe_events`` (``NOTIFY`` with the ids whose
events it holds): subscribers on other nodes read the new events from the
store. The bell is a hint only: a lost notification delays a subscriber until
its next poll, never loses an event.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import msgspec
import psycopg

from actors.store.backend import FencedOut
from actors.store.leases import (
    Fenced,
    Lease,
    LeaseHeld,
    Leases,
    LeaseSettings,
    heartbeat,
    write_fenced,
)
from actors.store.postgres import BAD_ROW, PostgresBackend
from actors.store.rows import Op, not_at_rest

log = logging.getLogger("troupe.fleet")

EVENTS_CHANNEL = "troupe_events"
INBOX_CHANNEL = "troupe_inbox"
NOTIFY_MAX = 7000
"""Bytes of session ids a notification carries; past it, ``*`` (every session)."""

_SESSION_ARG = {"event": 0, "mark": 0, "session": 0, "state": 3, "summary": 0, "history": 0,
                "ledger": 0, "subagent": 1, "lease": 0}  # fmt: skip
LEASE_OP = "lease"
"""A queued write that takes a new session's lease (its args: the session id)."""


def root_of(session_id: str) -> str:
    """The top-level session a session or subagent id belongs to (``s-x.a-1`` -> ``s-x``)."""
    return session_id.split(".", 1)[0]


def op_session(op: Op) -> str | None:
    """The top-level session a queued write belongs to, if any."""
    index = _SESSION_ARG.get(op.kind)
    return None if index is None else root_of(str(op.args[index]))


_CLAIMABLE = f"""
SELECT s.id FROM sessions s LEFT JOIN leases l ON l.session_id = s.id
WHERE {not_at_rest("s.state")}
  AND (l.session_id IS NULL OR l.expires_at <= clock_timestamp())
ORDER BY s.updated
"""
_NEXT_LAPSE = """
SELECT extract(epoch FROM min(alive_until) - clock_timestamp()) FROM nodes
WHERE node_id <> %s AND alive_until > clock_timestamp()
"""
_MINE = "SELECT count(*) FROM session_leases WHERE node_id = %s AND expires_at = 'infinity'"
_STILL_MINE = """
SELECT session_id, epoch FROM session_leases
WHERE session_id = ANY(%s) AND node_id = %s AND expires_at = 'infinity'
"""
_SEEN = """
INSERT INTO nodes (node_id, url, started, seen, draining)
VALUES (%s, %s, clock_timestamp(), clock_timestamp(), %s)
ON CONFLICT (node_id) DO UPDATE SET url = excluded.url, seen = excluded.seen,
    draining = excluded.draining
"""


class Ownership:
    """The leases this node holds and the fenced write of its batches. Every
    method blocks: call it from a worker thread, as the store does."""

    def __init__(self, backend: PostgresBackend, settings: LeaseSettings) -> None:
        self.backend = backend
        self.settings = msgspec.structs.replace(settings, on_node=True)
        self.leases = Leases(backend.connection, self.settings)
        self._lock = threading.Lock()
        self._held: dict[str, Lease] = {}
        self._gone: set[str] = set()
        """Sessions this node owned and no longer does: their writes are dropped."""
        self._unwritten: set[str] = set()
        """New sessions whose lease is queued, not yet written (not renewed yet)."""

    @property
    def node_id(self) -> str:
        return self.settings.node_id

    # -- holding -------------------------------------------------------------

    def held(self) -> dict[str, Lease]:
        with self._lock:
            return dict(self._held)

    def holds(self, session_id: str) -> bool:
        with self._lock:
            return root_of(session_id) in self._held

    def acquire(self, session_id: str) -> Lease:
        """Own ``session_id`` (raises :class:`LeaseHeld` while another node does)."""
        lease = self.leases.acquire(session_id)
        with self._lock:
            self._held[session_id] = lease
            self._gone.discard(session_id)
        return lease

    def adopt(self, session_id: str) -> Lease:
        """Own a new session (an id no node has seen): its lease is epoch 1, written
        by the store's writer with the session's first rows (a ``lease`` op the
        caller queues before them), so the start waits for no database."""
        lease = Lease(session_id, self.node_id, 1, time.time() + self.settings.ttl)
        with self._lock:
            self._held[session_id] = lease
            self._unwritten.add(session_id)
            self._gone.discard(session_id)
        return lease

    def release(self, session_id: str) -> None:
        """Hand the session over now: no write of it leaves this node after this."""
        with self._lock:
            lease = self._held.pop(session_id, None)
            self._gone.add(session_id)
            unwritten = session_id in self._unwritten
            self._unwritten.discard(session_id)
        if lease is not None and not unwritten:
            self.leases.release(lease)

    def lose(self, session_id: str) -> None:
        """Another node took the session: forget the lease, drop its writes."""
        with self._lock:
            self._held.pop(session_id, None)
            self._unwritten.discard(session_id)
            self._gone.add(session_id)

    def drops(self, session_id: str) -> bool:
        """Whether a write of this session (or subagent) must not be made here."""
        if not self._gone:  # nothing given back or lost yet: no lock to take (each write asks)
            return False
        root = root_of(session_id)
        with self._lock:
            return root in self._gone and root not in self._held

    def renew_all(self) -> list[str]:
        """Renew every lease held: the node's heartbeat, one row. The sessions
        whose lease was lost (another node took them: only possible once the
        heartbeat lapsed) are returned and marked lost: counted in the same
        transaction, and looked up one by one only when the count is not what
        this node holds."""
        with self._lock:  # a lease not written yet is not counted (nor lost)
            held = {s: lease for s, lease in self._held.items() if s not in self._unwritten}
        with self.backend.connection() as connection, connection.transaction():
            heartbeat(connection, self.node_id, self.settings.ttl)
            if not held:
                return []
            row = connection.execute(_MINE, (self.node_id,)).fetchone()
            if row is not None and int(row[0]) == len(held):
                return []
            rows = connection.execute(_STILL_MINE, (list(held), self.node_id)).fetchall()
        renewed = {str(r[0]) for r in rows if int(r[1]) == held[str(r[0])].epoch}
        lost = []
        with self._lock:
            for session_id in held:
                # a lease taken again meanwhile (a new epoch) is not the one lost
                if session_id not in renewed and self._held.get(session_id) == held[session_id]:
                    del self._held[session_id]
                    self._gone.add(session_id)
                    lost.append(session_id)
        return lost

    def claimable(self) -> tuple[list[str], float | None]:
        """Sessions with an input running (or an approval open) whose lease lapsed
        or was handed over: the ones a surviving node takes over at once; and in
        how many seconds the next other node's heartbeat lapses if not renewed
        (None: no other node is alive), the moment to look again."""
        with self.backend.connection() as connection:
            found = [row[0] for row in connection.execute(_CLAIMABLE).fetchall()]
            row = connection.execute(_NEXT_LAPSE, (self.node_id,)).fetchone()
        lapse = None if row is None or row[0] is None else max(0.0, float(row[0]))
        return found, lapse

    def owner(self, session_id: str) -> tuple[Lease, str, bool] | None:
        """The session's live lease and its node's URL, if another node holds it
        now (``live`` False: the lease lapsed and nobody took it yet)."""
        with self.backend.connection() as connection:
            row = connection.execute(
                "SELECT l.node_id, l.epoch, extract(epoch FROM l.expires_at),"
                " coalesce(n.url, ''), l.expires_at > clock_timestamp()"
                " FROM leases l LEFT JOIN nodes n ON n.node_id = l.node_id"
                " WHERE l.session_id = %s",
                (session_id,),
            ).fetchone()
        if row is None:
            return None
        return Lease(session_id, row[0], int(row[1]), float(row[2])), str(row[3]), bool(row[4])

    # -- nodes ---------------------------------------------------------------

    def alive(self, node_id: str) -> bool:
        """Whether the node's heartbeat runs (it has not gone away)."""
        with self.backend.connection() as connection:
            row = connection.execute(
                "SELECT alive_until > clock_timestamp() FROM nodes WHERE node_id = %s", (node_id,)
            ).fetchone()
        return row is not None and bool(row[0])

    def restarted(self) -> int:
        """A node starting: leases its id still holds are its previous process's
        (dead: node ids are unique among live nodes); they end now, so this
        process takes those sessions over like any other node would (with a new
        epoch). Returns how many there were."""
        with self.backend.connection() as connection:
            rows = connection.execute(
                "UPDATE session_leases SET expires_at = clock_timestamp()"
                " WHERE node_id = %s AND expires_at > clock_timestamp() RETURNING session_id",
                (self.node_id,),
            ).fetchall()
            heartbeat(connection, self.node_id, self.settings.ttl)
        return len(rows)

    def seen(self, url: str, draining: bool = False) -> None:
        """This node is alive and answers at ``url`` (``troupe nodes`` lists it)."""
        with self.backend.connection() as connection:
            connection.execute(_SEEN, (self.node_id, url, draining))

    # -- the inbox: requests for sessions another node owns -------------------

    def post(self, session_id: str, request: bytes) -> int:
        """Leave a request for the session's owner and ring its bell."""
        with self.backend.connection() as connection, connection.transaction():
            row = connection.execute(
                "INSERT INTO inbox (session_id, request) VALUES (%s, %s) RETURNING id",
                (session_id, request),
            ).fetchone()
            connection.execute("SELECT pg_notify(%s, %s)", (INBOX_CHANNEL, session_id))
        assert row is not None
        return int(row[0])

    def take(self) -> list[tuple[int, str, bytes]]:
        """The requests waiting for sessions this node holds, in the order posted,
        marked as taken by this node (another node's poll skips them)."""
        with self._lock:
            if not self._held:
                return []
        # The sessions this node holds as the database has them (its leases held
        # on the node's heartbeat), not as a list of every id held sent each poll:
        # a node holding 10,000 sessions would send them all every second.
        with self.backend.connection() as connection:
            rows = connection.execute(
                "UPDATE inbox SET taken_by = %(node)s WHERE id IN (SELECT id FROM inbox"
                " WHERE taken_by IS NULL AND session_id IN (SELECT session_id FROM"
                " session_leases WHERE node_id = %(node)s AND expires_at = 'infinity')"
                " ORDER BY id FOR UPDATE SKIP LOCKED) RETURNING id, session_id, request",
                {"node": self.node_id},
            ).fetchall()
        return sorted((int(r[0]), str(r[1]), bytes(r[2])) for r in rows)

    def reply(self, request_id: int, reply: bytes) -> None:
        with self.backend.connection() as connection, connection.transaction():
            connection.execute("UPDATE inbox SET reply = %s WHERE id = %s", (reply, request_id))
            connection.execute("SELECT pg_notify(%s, %s)", (INBOX_CHANNEL, f"reply:{request_id}"))

    def collect(self, request_id: int) -> tuple[bytes | None, str | None]:
        """The reply, if there is one (the row goes), and who took the request."""
        with self.backend.connection() as connection:
            row = connection.execute(
                "SELECT reply, taken_by FROM inbox WHERE id = %s", (request_id,)
            ).fetchone()
            if row is None:
                return None, None
            if row[0] is not None:
                connection.execute("DELETE FROM inbox WHERE id = %s", (request_id,))
                return bytes(row[0]), row[1]
        return None, row[1]

    def withdraw(self, request_id: int) -> bool:
        """Take back a request nobody took yet (its owner went away): True if it
        was still waiting (then nothing of it happened)."""
        with self.backend.connection() as connection:
            row = connection.execute(
                "DELETE FROM inbox WHERE id = %s AND taken_by IS NULL RETURNING id",
                (request_id,),
            ).fetchone()
        return row is not None

    def forget(self, request_id: int) -> None:
        with self.backend.connection() as connection:
            connection.execute("DELETE FROM inbox WHERE id = %s", (request_id,))

    # -- the fenced write ----------------------------------------------------

    def apply(self, batch: list[Op]) -> None:
        """The store's batch, fenced (see the module's docstring). Raises
        :class:`FencedOut` naming a session whose lease is lost (nothing of the
        batch is stored), or one of the backend's faults."""
        try:
            self._apply(batch)
        except BAD_ROW as error:
            log.error("store batch failed (%s); writing it op by op", error)
            for op in batch:
                try:
                    self._apply([op])
                except BAD_ROW as bad:
                    log.error("store dropped a %s write it cannot hold: %s", op.kind, bad)

    def _apply(self, batch: list[Op]) -> None:
        roots = [op_session(op) for op in batch]
        with self._lock:  # once per batch: the leases of the sessions it touches
            touched = {root for root in roots if root is not None}
            dropped = {s for s in touched if s in self._gone and s not in self._held}
            fences = sorted(
                {lease for s in touched - dropped if (lease := self._held.get(s))},
                key=lambda lease: lease.session_id,
            )
        if dropped:
            batch = [op for op, root in zip(batch, roots, strict=True) if root not in dropped]
        new = [str(op.args[0]) for op in batch if op.kind == LEASE_OP]
        if new:
            batch = [op for op in batch if op.kind != LEASE_OP]
        with self.backend.connection() as connection:
            try:
                write_fenced(
                    connection, fences, batch, (self.node_id, self.settings.ttl, new), _ring
                )
            except Fenced as fenced:
                self.lose(fenced.lease.session_id)
                raise FencedOut(fenced.lease.session_id) from None
        if new:
            self._written(new)

    def _written(self, new: list[str]) -> None:
        """New leases are in the database: renewed from now on; one given back
        while it was being written is given back there too."""
        with self._lock:
            self._unwritten.difference_update(new)
            given_back = [s for s in new if s not in self._held]
        for session_id in given_back:
            self.leases.release(Lease(session_id, self.node_id, 1, 0.0))


def _ring(cursor: psycopg.Cursor[Any], ops: list[Op]) -> None:
    """Ring ``troupe_events`` with the sessions whose events (or state) ``ops`` hold."""
    touched = sorted(
        {str(op.args[0]) for op in ops if op.kind == "event"}
        | {str(op.args[3]) for op in ops if op.kind == "state"}
    )
    if touched:
        payload = ",".join(touched)
        cursor.execute(
            "SELECT pg_notify(%s, %s)",
            (EVENTS_CHANNEL, payload if len(payload) < NOTIFY_MAX else "*"),
        )


__all__ = ["LeaseHeld", "LeaseSettings", "Ownership", "root_of"]
