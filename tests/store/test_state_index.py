"""A start reads the sessions that were running through the state's index, not a
scan of every stored session (issue 36: start-up flat in the number of stored
sessions)."""

from __future__ import annotations

from pathlib import Path

import trio

from actors.store import db
from actors.store.store import open_store
from protocol.session import SessionConfig

HANG_GUARD = 60


async def test_sessions_not_at_rest_are_every_state_but_idle_and_closed(tmp_path: Path) -> None:
    states = ["idle", "closed", "processing", "awaiting_input", "idle", "processing"]
    async with open_store(tmp_path) as store:
        for n, state in enumerate(states):
            store.put_session(
                f"s-{n}", "openai", "m", "local", "/w", SessionConfig(), created=n + 1
            )
            store.put_state(f"s-{n}", state)  # type: ignore[arg-type]
        with trio.fail_after(HANG_GUARD):
            await store.flush()
        rows = await store.sessions_not_at_rest()
    assert [(row.id, row.state) for row in rows] == [
        ("s-2", "processing"), ("s-3", "awaiting_input"), ("s-5", "processing"),
    ]  # fmt: skip
    connection = db.connect(tmp_path / "troupe.db")
    try:
        # a state written by another version of Troupe counts as not at rest too
        connection.execute("UPDATE sessions SET state='later' WHERE id='s-0'")
        assert [row.id for row in db.sessions_not_at_rest(connection)] == [
            "s-0",
            "s-2",
            "s-3",
            "s-5",
        ]
        plan = connection.execute("EXPLAIN QUERY PLAN " + db.NOT_AT_REST).fetchall()
    finally:
        connection.close()
    steps = " | ".join(str(step[-1]) for step in plan)
    assert "sessions_by_state" in steps and "SCAN sessions" not in steps, steps
