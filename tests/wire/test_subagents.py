"""Subscribing works for any session address, so a subagent's events are reachable
over the wire like its parent's."""

from __future__ import annotations

import pytest
import trio

from protocol.wire import CreateSession, SubmitInput
from tests.wire.conftest import HANG_GUARD, StartStack, events_until, subscribe


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


WORK = {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 0.5; echo work"}}]}
SCRIPT = {
    "turns": [
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"task": "do the child work"}}]},
        WORK,
        WORK,
        {"text": "done"},
    ],
    "repeat": True,
}


async def test_subscribe_to_a_subagent_by_address(start_stack: StartStack) -> None:
    async with start_stack(SCRIPT) as stack, stack.client() as client:
        session = (await client.request(CreateSession)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="delegate")
        spawned = await events_until(client, "subagent_spawned")
        address = spawned[-1].data["address"]
        assert address.startswith(f"/sessions/{session}/agents/")
        async with stack.client() as watcher:
            reply = await subscribe(watcher, address)
            assert reply.session == address
            with trio.fail_after(HANG_GUARD):
                child = await events_until(watcher, "tool_call_end", "session_end")
        assert child and all(e.session == address for e in child)
        assert {e.session_id for e in child} == {f"{session}.a-1"}
