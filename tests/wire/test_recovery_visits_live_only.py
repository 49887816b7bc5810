"""A server starting on a store of many old sessions visits only the ones that were
live when it stopped (issue #36): the others are listed as they were, their rows
not rewritten and their events not read, so a start does not grow with history."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
import trio

from actors.store import open_store
from protocol.events import (
    ProcessingEndEvent,
    SessionEndEvent,
    SessionEvent,
    SessionStartEvent,
    UserInputEvent,
)
from protocol.session import SessionConfig
from protocol.wire import GetSession, ListSessions
from tests.wire.conftest import StartStack


@pytest.fixture
def store() -> str:
    """SQLite whatever ``TROUPE_TEST_STORE`` says: this test reads ``troupe.db`` itself."""
    return ""


OLD = 40
LIVE = "s-live0001"
CLOSED = "s-closed01"


async def _stored(data_dir: Path) -> None:
    """``OLD`` finished sessions, one closed, and one whose input was running."""
    then = time.time() - 86400
    async with open_store(data_dir) as store:
        ids = [f"s-old{n:05d}" for n in range(OLD)]
        for sid in [*ids, LIVE, CLOSED]:
            store.put_session(sid, "openai", "m", "/environments/local", str(data_dir),
                              SessionConfig(), created=then)  # fmt: skip
            store.reserve_seqs(sid, 1024)
            events = [SessionStartEvent("openai", "m", str(data_dir)), UserInputEvent(f"{sid}")]
            if sid != LIVE:
                events.append(ProcessingEndEvent("idle"))
            if sid == CLOSED:
                events.append(SessionEndEvent("closed by its user"))
            for seq, data in enumerate(events, start=1):
                store.append_event(SessionEvent(sid, seq, then + seq, data))
            store.put_state(sid, {LIVE: "processing", CLOSED: "closed"}.get(sid, "idle"))
        await store.flush()


def _rows(data_dir: Path) -> dict[str, tuple[str, int, float, int]]:
    """Each session's (state, interrupted, updated, number of events)."""
    connection = sqlite3.connect(data_dir / "troupe.db")
    try:
        rows = connection.execute(
            "SELECT s.id, s.state, s.interrupted, s.updated,"
            " (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id) FROM sessions s"
        ).fetchall()
    finally:
        connection.close()
    return {row[0]: tuple(row[1:]) for row in rows}


async def test_a_restart_visits_only_the_session_that_was_running(
    start_stack: StartStack, tmp_path: Path
) -> None:
    data_dir = Path(await trio.Path(tmp_path).resolve()) / "data"
    await _stored(data_dir)
    before = _rows(data_dir)
    assert before[LIVE][0] == "processing" and len(before) == OLD + 2

    async with start_stack() as stack, stack.client() as client:
        registry = stack.server.registry
        assert registry.recovered == [LIVE]
        assert set(registry.records) == {LIVE}  # the others are not read to start
        old = await client.request(GetSession, session="s-old00007")  # read when named
        assert (old.session.state, old.session.last_seq) == ("idle", 1024)
        assert old.session.task == "s-old00007"  # no summary stored: counted from events
        listed = await client.request(ListSessions)
        assert {info.session_id for info in listed.sessions} == set(before)
    after = _rows(data_dir)

    for sid, row in before.items():
        if sid != LIVE:
            assert after[sid] == row, sid  # same state, same "updated", no event added
    state, interrupted, _, events = after[LIVE]
    assert (state, interrupted) == ("idle", 1)
    assert events == before[LIVE][3] + 2  # input_interrupted, processing_end
