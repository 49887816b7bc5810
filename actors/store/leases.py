"""Session ownership with fencing, on the PostgreSQL store (issue 37).

Each live session is owned by one node: a lease row (session, node id, epoch,
expiry) that its owner renews. Time is the database's (``clock_timestamp()``),
so nodes whose clocks disagree still agree on who holds what. A lease that is
not renewed expires after its TTL; any node may then take the session, and a
take-over always raises the epoch. Rows are never deleted (a release only ends
the lease's time), so a session's epoch never goes back and an epoch is never
handed out twice.

Fencing: every durable write of an owner goes through :func:`write_fenced`,
which, in the write's own transaction, reads the session's lease row ``FOR
SHARE`` and refuses the whole batch (:class:`Fenced`) unless the row still
names this node and this epoch. A take-over updates that row, so it waits for a
fenced write in flight to commit, and every write after it sees the new epoch
and fails: a node that was paused (SIGSTOP) or cut off past its lease can never
write again, whatever it believes.

A new session's lease needs no round trip of its own: its id is new, so the
lease is epoch 1 by construction; :func:`write_new` writes the leases of many
new sessions in one statement, inside the fenced write of the batch that holds
their first rows (:mod:`actors.store.ownership`), as events are batched.

A fleet node's leases (``on_node``) are renewed by its heartbeat, not one by
one: their row's expiry is ``infinity`` and the node's row in ``nodes`` says
until when the node is alive (``alive_until``), so renewing costs one row per
period however many sessions the node holds. Such a lease lapses when its node's
heartbeat does, or when it is given back (its own expiry set to now). The
``leases`` view gives every lease the expiry that holds for it.

This module is the mechanism; :mod:`actors.store.ownership` is a node's use of it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

import msgspec
import psycopg
import trio

from actors.store.postgres import write
from actors.store.rows import Op

Connect = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
"""Where a lease call gets its connection (``PostgresBackend.connection``)."""

DEFAULT_TTL = 10.0
DEFAULT_RENEW_EVERY = 3.0


def default_node_id() -> str:
    """This machine's name and this process's id: unique among live nodes."""
    return f"{socket.gethostname()}-{os.getpid()}"


class LeaseSettings(msgspec.Struct, frozen=True):
    """A node's ownership settings: its id, how long a lease lasts unrenewed,
    and how often its owner renews it (well inside the TTL)."""

    node_id: str
    ttl: float = DEFAULT_TTL
    renew_every: float = DEFAULT_RENEW_EVERY
    on_node: bool = False
    """Leases last as long as the node's heartbeat (:func:`heartbeat`), not each
    its own TTL: a fleet node's (:class:`actors.store.ownership.Ownership`)."""


class Lease(msgspec.Struct, frozen=True):
    """A lease held: the fence every durable write of the session carries."""

    session_id: str
    node_id: str
    epoch: int
    expires_at: float
    """The database's time (seconds since the epoch) when it lapses unrenewed."""


class LeaseHeld(Exception):
    """Another node holds the session's lease and it has not expired."""

    def __init__(self, session_id: str, owner: str, expires_at: float) -> None:
        super().__init__(f"session {session_id} is owned by {owner} (lease until {expires_at:.3f})")
        self.session_id = session_id
        self.owner = owner
        self.expires_at = expires_at


class LeaseLost(Exception):
    """This node no longer owns the session: another node took it over (the epoch
    moved on) or the lease row names someone else."""

    def __init__(self, lease: Lease) -> None:
        super().__init__(
            f"session {lease.session_id}: lease epoch {lease.epoch} of {lease.node_id} is lost"
        )
        self.lease = lease


class Fenced(LeaseLost):
    """A durable write refused: its lease was lost; nothing of the batch is stored."""


_HELD_UNTIL = """CASE WHEN held.expires_at = 'infinity'
    THEN coalesce((SELECT alive_until FROM nodes WHERE nodes.node_id = held.node_id), held.renewed)
    ELSE held.expires_at END"""
"""When the lease row ``held`` lapses (the ``leases`` view's expiry, for one row)."""
_ACQUIRE = f"""
INSERT INTO session_leases AS held (session_id, node_id, epoch, expires_at)
VALUES (%(session)s, %(node)s, 1, CASE WHEN %(on_node)s THEN 'infinity'::timestamptz
        ELSE clock_timestamp() + make_interval(secs => %(ttl)s) END)
ON CONFLICT (session_id) DO UPDATE SET
    node_id = excluded.node_id,
    epoch = CASE WHEN held.node_id = excluded.node_id AND {_HELD_UNTIL} > clock_timestamp()
                 THEN held.epoch ELSE held.epoch + 1 END,
    expires_at = excluded.expires_at,
    renewed = clock_timestamp()
WHERE held.node_id = excluded.node_id OR {_HELD_UNTIL} <= clock_timestamp()
RETURNING epoch, extract(epoch FROM CASE WHEN held.expires_at = 'infinity'
    THEN clock_timestamp() + make_interval(secs => %(ttl)s) ELSE held.expires_at END)
"""
_ACQUIRE_NEW = """
INSERT INTO session_leases AS held (session_id, node_id, epoch, expires_at)
SELECT id, %(node)s, 1, 'infinity' FROM unnest(%(ids)s::text[]) AS id
ON CONFLICT (session_id) DO UPDATE SET expires_at = excluded.expires_at,
    renewed = clock_timestamp()
WHERE held.node_id = excluded.node_id AND held.epoch = 1
RETURNING session_id
"""
_RENEW = """
UPDATE session_leases AS held
SET expires_at = clock_timestamp() + make_interval(secs => %s), renewed = clock_timestamp()
FROM unnest(%s::text[], %s::bigint[]) AS mine(session_id, epoch)
WHERE held.session_id = mine.session_id AND held.epoch = mine.epoch AND held.node_id = %s
RETURNING held.session_id, extract(epoch FROM held.expires_at)
"""
_RELEASE = """
UPDATE session_leases SET expires_at = clock_timestamp()
WHERE session_id = %s AND node_id = %s AND epoch = %s
"""
_OWNER = "SELECT session_id, node_id, epoch, extract(epoch FROM expires_at) FROM leases"
_HEARTBEAT = """
INSERT INTO nodes (node_id, url, started, seen, alive_until)
VALUES (%(node)s, '', clock_timestamp(), clock_timestamp(),
        clock_timestamp() + make_interval(secs => %(ttl)s))
ON CONFLICT (node_id) DO UPDATE SET seen = excluded.seen,
    alive_until = greatest(nodes.alive_until, excluded.alive_until)
"""


class Leases:
    """The lease table, through ``connect``. Every method blocks: call it from a
    worker thread (``trio.to_thread.run_sync``), as the store does."""

    def __init__(self, connect: Connect, settings: LeaseSettings) -> None:
        self._connect = connect
        self.settings = settings

    def acquire(self, session_id: str) -> Lease:
        """Own ``session_id``: a new lease (epoch 1), a take-over of an expired
        one (epoch + 1), or this node's own renewed (same epoch). Raises
        :class:`LeaseHeld` while another node's lease runs."""
        node = self.settings.node_id
        with self._connect() as connection, connection.transaction():
            settings = {"node": node, "ttl": self.settings.ttl, "on_node": self.settings.on_node}
            row = connection.execute(_ACQUIRE, {"session": session_id, **settings}).fetchone()
            if row is None:
                owner = connection.execute(
                    _OWNER + " WHERE session_id = %s", (session_id,)
                ).fetchone()
                assert owner is not None  # the insert conflicted with it
                raise LeaseHeld(session_id, owner[1], float(owner[3]))
        return Lease(session_id, node, int(row[0]), float(row[1]))

    def renew(self, lease: Lease) -> Lease:
        """Extend ``lease`` by the TTL. Raises :class:`LeaseLost` if another node
        took the session (a lapsed lease nobody took is still this node's)."""
        with self._connect() as connection:
            renewed = renew_many(connection, self.settings.ttl, lease.node_id, [lease])
        if lease.session_id not in renewed:
            raise LeaseLost(lease)
        return msgspec.structs.replace(lease, expires_at=renewed[lease.session_id])

    def release(self, lease: Lease) -> None:
        """Hand the session over now (a graceful drain): the lease ends, its row and
        epoch stay, so the next owner's epoch is higher. Nothing if already lost."""
        with self._connect() as connection:
            connection.execute(_RELEASE, (lease.session_id, lease.node_id, lease.epoch))

    def owner(self, session_id: str) -> Lease | None:
        """The session's lease row as it is (expired or not), or None if never owned."""
        with self._connect() as connection:
            row = connection.execute(_OWNER + " WHERE session_id = %s", (session_id,)).fetchone()
        return None if row is None else Lease(row[0], row[1], int(row[2]), float(row[3]))

    def expired(self) -> list[str]:
        """Sessions whose lease has lapsed: the ones a surviving node may take over."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT session_id FROM leases WHERE expires_at <= clock_timestamp()"
                " ORDER BY session_id"
            ).fetchall()
        return [row[0] for row in rows]

    def held_by(self, node_id: str) -> list[Lease]:
        """The leases a node holds now (``troupe nodes``, a drain)."""
        with self._connect() as connection:
            rows = connection.execute(
                _OWNER + " WHERE node_id = %s AND expires_at > clock_timestamp()"
                " ORDER BY session_id",
                (node_id,),
            ).fetchall()
        return [Lease(r[0], r[1], int(r[2]), float(r[3])) for r in rows]

    def write_fenced(self, fences: Iterable[Lease], ops: list[Op]) -> None:
        """Apply ``ops`` in one transaction only if every lease in ``fences`` is
        still held (same node, same epoch); else :class:`Fenced`, nothing stored."""
        with self._connect() as connection:
            write_fenced(connection, list(fences), ops)


def renew_many(
    connection: psycopg.Connection[Any], ttl: float, node_id: str, leases: Iterable[Lease]
) -> dict[str, float]:
    """Extend every lease in ``leases`` (all ``node_id``'s) by ``ttl``, in one
    statement: the sessions still held, with their new expiry. One missing was
    taken by another node (its epoch moved on)."""
    held = list(leases)
    if not held:
        return {}
    ids, epochs = [lease.session_id for lease in held], [lease.epoch for lease in held]
    rows = connection.execute(_RENEW, (ttl, ids, epochs, node_id)).fetchall()
    return {str(row[0]): float(row[1]) for row in rows}


def heartbeat(
    connection: psycopg.Connection[Any] | psycopg.Cursor[Any], node_id: str, ttl: float
) -> None:
    """The node is alive for ``ttl`` more seconds: every lease it holds ``on_node``
    runs that long (never shortened: a node that writes is alive)."""
    connection.execute(_HEARTBEAT, {"node": node_id, "ttl": ttl})


def write_new(
    cursor: psycopg.Cursor[Any], node_id: str, ttl: float, sessions: list[str]
) -> set[str]:
    """Take the leases of new sessions (epoch 1, held as long as the node's
    heartbeat, which this renews), in the caller's transaction; the ones
    written. A session missing from it has a lease row of another node or
    epoch: its id was not new, it is not ours."""
    if not sessions:
        return set()
    heartbeat(cursor, node_id, ttl)
    rows = cursor.execute(_ACQUIRE_NEW, {"node": node_id, "ids": sessions}).fetchall()
    return {str(row[0]) for row in rows}


def write_fenced(
    connection: psycopg.Connection[Any],
    fences: list[Lease],
    ops: list[Op],
    new: tuple[str, float, list[str]] | None = None,
    after: Callable[[psycopg.Cursor[Any], list[Op]], None] | None = None,
) -> None:
    """The fenced write on one connection: the lease rows are read ``FOR SHARE``
    in the write's transaction, so a take-over waits for it or it sees the take-over.
    ``new`` (node id, TTL, session ids): leases of new sessions written first, in
    the same transaction (their fences among ``fences``); ``after``: more done in
    the transaction once the ops are written (the store's doorbell)."""
    with connection.transaction(), connection.cursor() as cursor:
        if new is not None:
            # A lease row this transaction has just written is ours and locked until
            # it commits: its fence needs no second look (most of a batch of starts).
            written = write_new(cursor, *new)
            fences = [
                lease for lease in fences
                if not (lease.session_id in written and (lease.node_id, lease.epoch) == (new[0], 1))
            ]  # fmt: skip
        if fences:
            wanted = sorted({lease.session_id for lease in fences})  # one lock order for all
            rows = cursor.execute(
                "SELECT session_id, node_id, epoch FROM session_leases"
                " WHERE session_id = ANY(%s) ORDER BY session_id FOR SHARE",
                (wanted,),
            ).fetchall()
            current = {row[0]: (row[1], int(row[2])) for row in rows}
            for lease in fences:
                if current.get(lease.session_id) != (lease.node_id, lease.epoch):
                    raise Fenced(lease)
        write(cursor, ops)
        if after is not None:
            after(cursor, ops)


async def keep_renewed(
    leases: Leases, lease: Lease, on_lost: Callable[[LeaseLost], None] | None = None
) -> None:
    """Renew ``lease`` every ``renew_every`` seconds until cancelled, or until it is
    lost (``on_lost`` is told, then this returns). A renewal that fails for a
    database fault is tried again at the next period: the lease may lapse
    meanwhile, and the writes it fences say so."""
    while True:
        await trio.sleep(leases.settings.renew_every)
        try:
            lease = await trio.to_thread.run_sync(leases.renew, lease)
        except LeaseLost as lost:
            if on_lost is not None:
                on_lost(lost)
            return
        except (psycopg.OperationalError, psycopg.InterfaceError):
            continue
