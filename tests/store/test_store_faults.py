"""The store's writer through a fault, without root: the database file moved away
from its path (as when its directory vanishes) and moved back. Writes wait and are
kept, reads go on, the health says so, and the queue goes in once the file is back.
The same on real file systems (full, read-only, unmounted): tests/wire/test_store_faults.py.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import trio

from actors.store.store import open_store
from protocol.events import SessionEvent, UserInputEvent

HANG_GUARD = 20


def _event(seq: int) -> SessionEvent:
    return SessionEvent("s-1", seq, time.time(), UserInputEvent(content=f"input {seq}"))


async def test_writes_wait_through_a_vanished_file_and_go_in_when_it_is_back(
    tmp_path: Path,
) -> None:
    async with open_store(tmp_path) as store:
        store.append_event(_event(1))
        with trio.fail_after(HANG_GUARD):
            await store.wait_committed("s-1", 1)
        moved = tmp_path / "elsewhere.db"
        assert store.path is not None
        os.rename(store.path, moved)
        changed = store.health.changed
        store.append_event(_event(2))
        with trio.fail_after(HANG_GUARD):
            await changed.wait()
        assert not store.health.available
        assert "gone" in store.health.reason and "s-1" in store.health.waiting
        assert store.committed("s-1") == 1
        assert [row.seq for row in await store.events_after("s-1", 0)] == [1]  # reads go on

        os.rename(moved, store.path)
        with trio.fail_after(HANG_GUARD):
            await store.wait_committed("s-1", 2)
        assert store.health.available and not store.health.waiting
    async with open_store(tmp_path) as reopened:
        rows = await reopened.events_after("s-1", 0)
    assert [row.seq for row in rows] == [1, 2]
