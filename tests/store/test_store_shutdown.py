"""The store at shutdown: what a session queues after the writer task was
cancelled (it suspends while the server's scope is being cancelled) is still
written, and waiting for it returns instead of waiting for a writer that is gone."""

from __future__ import annotations

import time
from pathlib import Path

import trio
import trio.testing

from actors.store.store import open_store
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
