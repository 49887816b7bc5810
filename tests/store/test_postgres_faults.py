"""The store on PostgreSQL through a database restart: PostgreSQL stopped (a fast
shutdown, its sessions ended) while events are written, then started again.
Writes wait and are kept, the health says why, reads fail with the typed fault
(the data is on the stopped server), and the queue goes in by itself once the
database is back, with no event lost or doubled."""

from __future__ import annotations

import time
from pathlib import Path

import trio

from actors.store.health import StoreUnavailable
from actors.store.store import open_store
from protocol.events import SessionEvent, UserInputEvent
from tests.postgres import PostgresCluster

HANG_GUARD = 30


def _event(seq: int) -> SessionEvent:
    return SessionEvent("s-1", seq, time.time(), UserInputEvent(content=f"input {seq}"))


async def test_writes_wait_through_a_restart_and_go_in_when_it_is_back(
    tmp_path: Path, postgres: PostgresCluster, postgres_url: str
) -> None:
    async with open_store(tmp_path, postgres_url) as store:
        store.append_event(_event(1))
        with trio.fail_after(HANG_GUARD):
            await store.wait_committed("s-1", 1)
        await trio.to_thread.run_sync(postgres.stop)
        try:
            changed = store.health.changed
            for seq in range(2, 50):
                store.append_event(_event(seq))
            store.reserve_seqs("s-1", 64)
            with trio.fail_after(HANG_GUARD):
                await changed.wait()
            assert not store.health.available
            assert "s-1" in store.health.waiting
            assert "connection" in store.health.reason and "\n" not in store.health.reason
            assert store.committed("s-1") == 1
            try:
                await store.events_after("s-1", 0)
            except StoreUnavailable as error:
                assert error.code == "store_unavailable"
            else:
                raise AssertionError("a read of a stopped PostgreSQL did not fail")
        finally:
            await trio.to_thread.run_sync(postgres.start)
        with trio.fail_after(HANG_GUARD):
            await store.wait_committed("s-1", 49)
            await store.wait_reserved("s-1", 64)
        assert store.health.available and not store.health.waiting
        assert store.health.outages == 1
    async with open_store(tmp_path, postgres_url) as reopened:
        rows = await reopened.events_after("s-1", 0)
        assert await reopened.seq_mark("s-1") == 64
    assert [row.seq for row in rows] == list(range(1, 50))


async def test_a_database_that_cannot_be_reached_at_start_is_one_typed_fault(
    tmp_path: Path, postgres: PostgresCluster
) -> None:
    from actors.store.health import StoreCannotOpen

    url = postgres.url("postgres").replace(str(postgres.socket_dir), str(tmp_path))
    with trio.fail_after(HANG_GUARD):
        try:
            async with open_store(tmp_path, url):
                raise AssertionError("opened a store with no database behind it")
        except StoreCannotOpen as error:
            assert "cannot open the store postgresql://troupe@" in str(error)
