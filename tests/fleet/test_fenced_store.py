"""The store's writer on a fleet node (issue 37): a batch refused for one session
that another node took over drops that session's writes only; the rest of the
batch goes in, a waiter on the moved session is told it moved, and nothing
queued for it afterwards reaches the database."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest
import trio

from actors.store.health import SessionMoved
from actors.store.leases import LeaseHeld, Leases, LeaseSettings
from actors.store.ownership import Ownership
from actors.store.postgres import PostgresBackend
from actors.store.store import open_store
from protocol.events import SessionEvent, WarningEvent
from protocol.session import SessionConfig


def _stored(url: str, session: str) -> list[int]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT seq FROM troupe.events WHERE session_id=%s ORDER BY seq", (session,)
        ).fetchall()
    return [int(row[0]) for row in rows]


def _event(session: str, seq: int) -> SessionEvent:
    return SessionEvent(session, seq, time.time(), WarningEvent("x"))


async def test_a_moved_session_s_writes_go_the_rest_stay(tmp_path: Path, postgres_url: str) -> None:
    async with open_store(tmp_path, postgres_url) as store:
        backend = store.backend
        assert isinstance(backend, PostgresBackend)
        ownership = Ownership(backend, LeaseSettings("node-a", ttl=30))
        store.fence = ownership
        moved: list[str] = []
        store.on_fenced = moved.append
        for session in ("s-kept", "s-moved"):
            await trio.to_thread.run_sync(ownership.acquire, session)
        store.append_event(_event("s-kept", 1))
        store.append_event(_event("s-moved", 1))
        store.append_event(_event("s-moved.a-1", 1))  # its subagent: the same fence
        await store.flush()
        assert _stored(postgres_url, "s-moved.a-1") == [1]

        # Another node takes s-moved over (its lease released here, taken there).
        other = Leases(backend.connection, LeaseSettings("node-b", ttl=30))
        held = ownership.held()["s-moved"]
        await trio.to_thread.run_sync(ownership.leases.release, held)  # as if it lapsed
        taken = await trio.to_thread.run_sync(other.acquire, "s-moved")
        assert taken.epoch == held.epoch + 1

        store.append_event(_event("s-moved", 2))
        store.append_event(_event("s-kept", 2))
        store.append_event(_event("s-moved.a-1", 2))
        with pytest.raises(SessionMoved):
            await store.wait_committed("s-moved", 2)
        await store.wait_committed("s-kept", 2)
        assert moved == ["s-moved"]
        store.append_event(_event("s-moved", 3))  # after: dropped before the database
        store.append_event(_event("s-kept", 3))
        await store.flush()
    assert _stored(postgres_url, "s-kept") == [1, 2, 3]
    assert _stored(postgres_url, "s-moved") == [1]
    assert _stored(postgres_url, "s-moved.a-1") == [1]


def _leases(url: str) -> dict[str, tuple[str, int]]:
    with psycopg.connect(url) as connection:
        rows = connection.execute("SELECT session_id, node_id, epoch FROM troupe.session_leases")
        return {str(row[0]): (str(row[1]), int(row[2])) for row in rows.fetchall()}


def _sessions_stored(url: str) -> set[str]:
    with psycopg.connect(url) as connection:
        return {str(row[0]) for row in connection.execute("SELECT id FROM troupe.sessions")}


async def test_new_sessions_leases_go_with_their_first_rows(
    tmp_path: Path, postgres_url: str
) -> None:
    """A new session's lease is written by the writer, in the batch of its first
    rows (no round trip of its own): many of them at once, each epoch 1, renewed
    from then on; one whose id another node already holds is fenced out, its
    rows never stored, and the others of the batch are."""
    async with open_store(tmp_path, postgres_url) as store:
        backend = store.backend
        assert isinstance(backend, PostgresBackend)
        ownership = Ownership(backend, LeaseSettings("node-a", ttl=30))
        store.fence = ownership
        moved: list[str] = []
        store.on_fenced = moved.append
        other = Leases(backend.connection, LeaseSettings("node-b", ttl=30))
        await trio.to_thread.run_sync(other.acquire, "s-taken")  # an id that is not new

        # Before the writer runs: not in the database, and a renewal does not lose them.
        news = [f"s-new-{n}" for n in range(40)]
        for session in [*news, "s-taken"]:
            ownership.adopt(session)
        assert await trio.to_thread.run_sync(ownership.renew_all) == []
        for session in [*news, "s-taken"]:
            store.put_lease(session)
            store.put_session(session, "p", "m", "/environments/local", None, SessionConfig())
            store.append_event(_event(session, 1))
        await store.flush()

        leases = _leases(postgres_url)
        assert {s: leases[s] for s in news} == {s: ("node-a", 1) for s in news}
        assert leases["s-taken"] == ("node-b", 1)
        assert moved == ["s-taken"]
        assert _sessions_stored(postgres_url) == set(news)
        assert _stored(postgres_url, "s-taken") == []
        assert all(_stored(postgres_url, s) == [1] for s in news)
        assert await trio.to_thread.run_sync(ownership.renew_all) == []
        assert set(ownership.held()) == set(news)

        # One given back before its lease was written: never written as held. The
        # release is called here, with no checkpoint since put_lease, so the writer
        # (a task of this loop) cannot have taken the lease into a batch yet; a
        # lease unwritten needs no database to be given back.
        ownership.adopt("s-gone")
        store.put_lease("s-gone")
        ownership.release("s-gone")
        store.append_event(_event("s-gone", 1))
        await store.flush()
        assert "s-gone" not in _leases(postgres_url)
        assert _stored(postgres_url, "s-gone") == []


async def test_a_node_renews_its_heartbeat_not_each_lease(
    tmp_path: Path, postgres_url: str
) -> None:
    """A fleet node's leases last as long as its heartbeat: a renewal writes the
    node's row only (the lease rows stay as they are, however many), the leases
    lapse together once it stops, and the renewal after another node took one
    over reports that one lost."""
    async with open_store(tmp_path, postgres_url) as store:
        backend = store.backend
        assert isinstance(backend, PostgresBackend)
        ownership = Ownership(backend, LeaseSettings("node-a", ttl=30))
        store.fence = ownership
        store.on_fenced = lambda session_id: None
        await trio.to_thread.run_sync(ownership.restarted)  # its heartbeat begins
        sessions = [f"s-{n}" for n in range(30)]
        for session in sessions:
            ownership.adopt(session)
            store.put_lease(session)
        await store.flush()

        def rows() -> list[tuple[object, ...]]:
            with psycopg.connect(postgres_url) as connection:
                return connection.execute(
                    "SELECT session_id, node_id, epoch, expires_at::text, renewed"
                    " FROM troupe.session_leases ORDER BY session_id"
                ).fetchall()

        def live() -> set[str]:
            with psycopg.connect(postgres_url) as connection:
                found = connection.execute(
                    "SELECT session_id FROM troupe.leases WHERE expires_at > clock_timestamp()"
                ).fetchall()
            return {str(row[0]) for row in found}

        before = rows()
        for _ in range(3):
            assert await trio.to_thread.run_sync(ownership.renew_all) == []
        assert rows() == before  # not one lease row written by the renewals
        assert live() == set(sessions)

        other = Leases(backend.connection, LeaseSettings("node-b", ttl=30, on_node=True))
        with pytest.raises(LeaseHeld):
            await trio.to_thread.run_sync(other.acquire, "s-3")
        with psycopg.connect(postgres_url) as connection:  # as if it stopped renewing
            connection.execute(
                "UPDATE troupe.nodes SET alive_until = clock_timestamp() WHERE node_id = 'node-a'"
            )
        assert not live()  # all lapse at once
        taken = await trio.to_thread.run_sync(other.acquire, "s-3")
        assert (taken.node_id, taken.epoch) == ("node-b", 2)
        assert await trio.to_thread.run_sync(ownership.renew_all) == ["s-3"]
        assert set(ownership.held()) == set(sessions) - {"s-3"}
        assert live() == set(sessions) - {"s-3"}  # the others run again, on node-a
