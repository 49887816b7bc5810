"""The store at shutdown: what a session queues after the writer task was
cancelled (it suspends while the server's scope is being cancelled) is still
written, and waiting for it returns instead of waiting for a writer that is gone."""

from __future__ import annotations

import time
from pathlib import Path

import trio
import trio.testing

from actors.store.health import StoreUnavailable
from actors.store.store import Store, open_store
from protocol.events import SessionEvent, UserInputEvent

HANG_GUARD = 20


async def test_a_write_queued_after_the_writer_stopped_is_saved(tmp_path: Path) -> None:
    with trio.CancelScope() as outer:
        async with open_store(tmp_path) as store:
            outer.cancel()
            try:
                await trio.sleep_forever()
            finally:
                with trio.CancelScope(shield=True):
                    await trio.testing.wait_all_tasks_blocked()  # the writer has ended
                    event = SessionEvent("s-1", 1, time.time(), UserInputEvent(content="late"))
                    store.append_event(event)
                    with trio.fail_after(HANG_GUARD):
                        await store.wait_committed("s-1", 1)
                    assert store.committed("s-1") == 1
    async with open_store(tmp_path) as reopened:
        rows = await reopened.events_after("s-1", 0)
    assert [row.kind for row in rows] == ["user_input"]


async def test_reads_from_tasks_that_outlive_the_store_never_touch_a_closed_database(
    tmp_path: Path,
) -> None:
    """An embedded runtime's callers read from outside the store's scope, so the
    database may close while one of their reads runs in its thread. Closing waits
    for that read (SQLite closed under a running statement is a use-after-free that
    took a whole test process down), and every read after it gets the typed fault."""
    endings: list[str] = []

    async def read_until_closed(store: Store, first_read: trio.Event) -> None:
        while True:
            try:
                rows = await store.events_after("s-1", 0)
            except StoreUnavailable as error:
                endings.append(str(error))
                return
            assert len(rows) == 300
            first_read.set()

    for _ in range(10):
        async with trio.open_nursery() as outside, open_store(tmp_path) as store:
            if not await store.events_after("s-1", 0):
                for seq in range(1, 301):
                    content = f"input {seq} " + "x" * 200
                    event = SessionEvent("s-1", seq, time.time(), UserInputEvent(content=content))
                    store.append_event(event)
                await store.flush()
            firsts = [trio.Event() for _ in range(3)]
            for first_read in firsts:
                outside.start_soon(read_until_closed, store, first_read)
            with trio.fail_after(HANG_GUARD):
                for first_read in firsts:
                    await first_read.wait()
    assert endings == ["the store is closed"] * 30
