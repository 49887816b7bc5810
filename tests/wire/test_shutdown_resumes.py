"""A server that shuts down cleanly suspends its sessions rather than closing
them: after a restart each is listed (not closed), its running input is marked
interrupted, and it takes the next input."""

from __future__ import annotations

import pytest

from protocol.wire import CreateSession, ListSessions, SubmitInput
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


async def test_clean_shutdown_leaves_sessions_resumable(start_stack: StartStack) -> None:
    script = shell_turns("sleep 60", final="Back again.")
    async with start_stack(script) as stack, stack.client() as client:
        session = (await client.request(CreateSession)).session.session_id
        idle = (await client.request(CreateSession)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="wait a minute")
        await events_until(client, "tool_call_start")

    # The restarted server's mock answers at once: its first turn is not the
    # minute-long command (which would only run into the default 10 s timeout).
    async with start_stack(shell_turns(final="Back again.")) as stack, stack.client() as client:
        listed = {s.session_id: s for s in (await client.request(ListSessions)).sessions}
        assert {listed[session].state, listed[idle].state} == {"idle"}
        await subscribe(client, session)
        replay = await events_until(client, "processing_end")
        kinds = [event.kind for event in replay]
        assert "session_end" not in kinds and "input_interrupted" in kinds
        await client.request(SubmitInput, session=session, text="and now?")
        later = await events_until(client, "processing_end")
        assert all(event.seq > replay[-1].seq for event in later)
        assert later[-1].data["state"] == "idle"
