"""Session ownership with fencing, against a real PostgreSQL (issue 37): one
owner per session, a take-over only once the lease lapsed and always with a
higher epoch, and a fenced write refused, whole, once the lease is lost, so an
owner that was paused past its lease (SIGSTOP, a partition) cannot append a
single event after another node took the session over."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
import trio

from actors.store.leases import (
    Fenced,
    Lease,
    LeaseHeld,
    LeaseLost,
    Leases,
    LeaseSettings,
    keep_renewed,
    write_fenced,
)
from actors.store.postgres import PostgresBackend, open_postgres
from actors.store.rows import Op
from tests.waiting import wait_until

SHORT = 0.3
"""A TTL short enough for a test to see leases lapse (never a timing assertion)."""


@pytest.fixture
def backend(postgres_url: str) -> Iterator[PostgresBackend]:
    opened = open_postgres(postgres_url)
    try:
        yield opened
    finally:
        opened.close()


def _node(backend: PostgresBackend, name: str, ttl: float = 10.0) -> Leases:
    return Leases(backend.connection, LeaseSettings(name, ttl=ttl, renew_every=ttl / 4))


def _event(session: str, seq: int) -> Op:
    return Op("event", (session, seq, time.time(), "warning", b'{"message":"x"}'))


def _stored(url: str, session: str) -> list[int]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT seq FROM troupe.events WHERE session_id=%s ORDER BY seq", (session,)
        ).fetchall()
    return [row[0] for row in rows]


async def _take_when_lapsed(node: Leases, session: str) -> Lease:
    taken: list[Lease] = []

    def take() -> bool:
        try:
            taken.append(node.acquire(session))
        except LeaseHeld:
            return False
        return True

    await wait_until(take, what=f"{node.settings.node_id} to take {session} over")
    return taken[0]


async def test_one_owner_and_its_own_renewal_keeps_the_epoch(backend: PostgresBackend) -> None:
    a, b = _node(backend, "node-a"), _node(backend, "node-b")
    first = a.acquire("s-1")
    assert (first.node_id, first.epoch) == ("node-a", 1)
    with pytest.raises(LeaseHeld) as held:
        b.acquire("s-1")
    assert held.value.owner == "node-a"
    again = a.acquire("s-1")
    assert again.epoch == 1 and again.expires_at >= first.expires_at
    renewed = a.renew(again)
    assert renewed.epoch == 1 and renewed.expires_at >= again.expires_at
    assert a.owner("s-1") == renewed and a.owner("s-never") is None
    assert [lease.session_id for lease in a.held_by("node-a")] == ["s-1"]
    assert b.held_by("node-b") == []


async def test_a_paused_owner_cannot_write_after_a_take_over(
    backend: PostgresBackend, postgres_url: str
) -> None:
    a, b = _node(backend, "node-a", ttl=SHORT), _node(backend, "node-b", ttl=SHORT)
    lease_a = a.acquire("s-1")
    a.write_fenced([lease_a], [_event("s-1", 1), _event("s-1", 2)])

    # node A stops renewing (SIGSTOP, a partition): its lease lapses, B takes over
    lease_b = await _take_when_lapsed(b, "s-1")
    assert lease_b.epoch == lease_a.epoch + 1
    assert "s-1" not in b.expired()

    # A comes back believing it owns the session: not one event goes in
    with pytest.raises(Fenced):
        a.write_fenced([lease_a], [_event("s-1", 3)])
    with pytest.raises(Fenced):  # a batch touching it is refused whole
        a.write_fenced([lease_a], [_event("s-1", 4), _event("s-1", 5)])
    with pytest.raises(LeaseLost):
        a.renew(lease_a)
    assert _stored(postgres_url, "s-1") == [1, 2]

    b.write_fenced([lease_b], [_event("s-1", 3)])
    assert _stored(postgres_url, "s-1") == [1, 2, 3]


async def test_a_lapsed_lease_nobody_took_is_still_the_owners(backend: PostgresBackend) -> None:
    a = _node(backend, "node-a", ttl=SHORT)
    lease = a.acquire("s-1")
    await wait_until(lambda: "s-1" in a.expired(), what="the lease to lapse")
    renewed = a.renew(lease)  # no other node bumped the epoch: writing is still safe
    assert renewed.epoch == lease.epoch
    a.write_fenced([renewed], [_event("s-1", 1)])
    retaken = a.acquire("s-1")
    assert retaken.epoch == lease.epoch


async def test_a_release_hands_over_at_once_and_epochs_never_repeat(
    backend: PostgresBackend,
) -> None:
    nodes = [_node(backend, f"node-{n}") for n in range(3)]
    epochs = []
    holder = nodes[0].acquire("s-1")
    epochs.append(holder.epoch)
    for round_number in range(1, 7):
        node = nodes[round_number % 3]
        with pytest.raises(LeaseHeld):
            node.acquire("s-1")
        nodes[(round_number - 1) % 3].release(holder)
        holder = node.acquire("s-1")  # at once: a release ends the lease now
        epochs.append(holder.epoch)
    assert epochs == list(range(1, 8))
    with pytest.raises(Fenced):
        nodes[0].write_fenced([Lease("s-1", "node-0", 1, 0.0)], [_event("s-1", 1)])


async def test_two_nodes_racing_for_lapsed_sessions_each_get_one_owner(
    backend: PostgresBackend,
) -> None:
    a, b = _node(backend, "node-a"), _node(backend, "node-b")
    sessions = [f"s-{n}" for n in range(20)]
    won: dict[str, list[Lease]] = {session: [] for session in sessions}
    start = threading.Barrier(2)

    def race(node: Leases) -> None:
        start.wait()
        for session in sessions:
            with contextlib.suppress(LeaseHeld):
                won[session].append(node.acquire(session))

    await trio.to_thread.run_sync(lambda: _both(race, a, b))
    assert all(len(leases) == 1 for leases in won.values()), won
    assert {leases[0].epoch for leases in won.values()} == {1}


def _both(race: object, a: Leases, b: Leases) -> None:
    assert callable(race)
    threads = [threading.Thread(target=race, args=(node,)) for node in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


async def test_a_renewed_lease_outlives_its_ttl_and_lapses_once_renewal_stops(
    backend: PostgresBackend, postgres_url: str
) -> None:
    a, b = _node(backend, "node-a", ttl=SHORT), _node(backend, "node-b", ttl=SHORT)
    first = a.acquire("s-1")
    lost: list[LeaseLost] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_renewed, a, first, lost.append)

        def past_the_first_expiry() -> bool:
            with psycopg.connect(postgres_url) as connection:
                row = connection.execute(
                    "SELECT clock_timestamp() > to_timestamp(%s)", (first.expires_at,)
                ).fetchone()
            return bool(row and row[0])

        await wait_until(past_the_first_expiry, what="the first lease's time to pass")
        with pytest.raises(LeaseHeld):  # renewed: still node A's
            b.acquire("s-1")
        nursery.cancel_scope.cancel()
    taken = await _take_when_lapsed(b, "s-1")
    assert taken.epoch == first.epoch + 1 and not lost


async def test_the_renewer_says_when_the_lease_is_lost(backend: PostgresBackend) -> None:
    a, b = _node(backend, "node-a", ttl=SHORT), _node(backend, "node-b", ttl=SHORT)
    lease = a.acquire("s-1")
    a.release(lease)
    b.acquire("s-1")
    lost: list[LeaseLost] = []
    with trio.fail_after(30):
        await keep_renewed(a, lease, lost.append)  # returns once it knows
    assert [error.lease for error in lost] == [lease]


async def test_a_take_over_waits_for_a_fenced_write_in_flight(
    backend: PostgresBackend, postgres_url: str
) -> None:
    """The write passed its fence and has not committed: a take-over waits for it
    (the lease row is held ``FOR SHARE``), so the write is kept, and the old
    owner's next write is refused."""
    a, b = _node(backend, "node-a", ttl=SHORT), _node(backend, "node-b", ttl=SHORT)
    lease_a = a.acquire("s-1")
    await wait_until(lambda: "s-1" in a.expired(), what="the lease to lapse")
    taken: list[Lease] = []
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("SET search_path TO troupe")
        async with trio.open_nursery() as nursery:
            with connection.transaction():  # A's write, in flight
                write_fenced(connection, [lease_a], [_event("s-1", 1)])

                async def take_over() -> None:
                    taken.append(await trio.to_thread.run_sync(b.acquire, "s-1"))

                nursery.start_soon(take_over)

                def waiting_on_a_lock() -> bool:
                    with psycopg.connect(postgres_url) as other:
                        row = other.execute(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            " AND datname = current_database()"
                        ).fetchone()
                    return bool(row and row[0])

                await wait_until(waiting_on_a_lock, what="the take-over to wait for the write")
                assert not taken
    assert [lease.epoch for lease in taken] == [lease_a.epoch + 1]
    assert _stored(postgres_url, "s-1") == [1]
    with pytest.raises(Fenced):
        a.write_fenced([lease_a], [_event("s-1", 2)])
