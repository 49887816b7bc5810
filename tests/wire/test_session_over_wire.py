"""A whole session over a real WebSocket: create, subscribe, submit, events, results."""

from __future__ import annotations

import pytest

from protocol.client import RequestError
from protocol.wire import (
    CreateSession,
    GetSession,
    ListSessions,
    SessionCreated,
    SessionDetail,
    SubmitInput,
)
from tests.waiting import wait_until
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


async def test_whole_session_over_the_wire(start_stack: StartStack) -> None:
    script = shell_turns("echo hello-from-tool > out.txt && cat out.txt", final="Wrote it.")
    async with start_stack(script) as stack, stack.client() as client:
        created = await client.request(CreateSession)
        assert isinstance(created, SessionCreated)
        session = created.session.session_id
        subscribed = await subscribe(client, session)
        assert subscribed.session == session
        await client.request(SubmitInput, session=session, text="write a file")
        events = await events_until(client, "processing_end")
        kinds = [event.kind for event in events]
        assert kinds[0] == "session_start"
        assert "user_input" in kinds and "tool_call_start" in kinds
        end = next(e for e in events if e.kind == "tool_call_end")
        assert "hello-from-tool" in end.data["output"]
        texts = [e.data["text"] for e in events if e.kind == "assistant_text_end"]
        assert texts[-1] == "Wrote it."
        assert (stack.work / "out.txt").read_text() == "hello-from-tool\n"
        seqs = [e.seq for e in events]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

        listed = await client.request(ListSessions)
        assert [s.session_id for s in listed.sessions] == [session]
        details: list[SessionDetail] = []

        async def four_turns_stored() -> bool:
            details.append(await client.request(GetSession, session=session))
            return len(details[-1].history) >= 4

        await wait_until(four_turns_stored, what="four stored turns", interval=0.05)
        kinds = [type(t).__name__ for t in details[-1].history]
        assert kinds[:2] == ["UserTurn", "AssistantTurn"]


async def test_unknown_session_is_a_typed_error(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        try:
            await client.request(SubmitInput, session="s-nope", text="x")
        except RequestError as error:
            assert error.code == "not_found"
        else:
            raise AssertionError("submit to an unknown session succeeded")
