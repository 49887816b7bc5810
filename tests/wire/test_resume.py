"""Two clients on one session, a reconnect with after_seq, and msgpack frames."""

from __future__ import annotations

import pytest
import trio

from protocol.events import EPHEMERAL_KINDS
from protocol.wire import CreateSession, Event, SubmitInput
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


def durable(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.seq, e.kind) for e in events if e.kind not in EPHEMERAL_KINDS]


async def test_two_clients_see_the_same_session(start_stack: StartStack) -> None:
    async with (
        start_stack(shell_turns("echo one", "echo two")) as stack,
        stack.client() as first,
        stack.client(encoding="msgpack") as second,
    ):
        assert second.welcome.encoding == "msgpack"
        session = (await first.request(CreateSession)).session.session_id
        await subscribe(first, session)
        await subscribe(second, session)
        await second.request(SubmitInput, session=session, text="go")
        seen_first = await events_until(first, "processing_end")
        seen_second = await events_until(second, "processing_end")
        assert durable(seen_first) == durable(seen_second)
        outputs = [e.data["output"] for e in seen_second if e.kind == "tool_call_end"]
        assert [o.splitlines()[0] for o in outputs] == ["one", "two"]


async def test_reconnect_with_after_seq_has_no_gap_and_no_duplicate(
    start_stack: StartStack,
) -> None:
    commands = [f"sleep 0.05; echo step-{n}" for n in range(6)]
    async with start_stack(shell_turns(*commands)) as stack:
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="work")
            before = await events_until(client, "tool_call_end")
        cursor = max(e.seq for e in before)
        await trio.sleep(0.1)  # the session goes on while nobody listens
        async with stack.client() as client:
            await subscribe(client, session, after_seq=cursor)
            after = await events_until(client, "processing_end")
        assert all(e.seq > cursor for e in after)
        async with stack.client() as client:
            await subscribe(client, session, after_seq=0)
            everything = await events_until(client, "processing_end")
        joined = durable(before) + durable(after)
        assert joined == durable(everything)
        seqs = [seq for seq, _ in joined]
        assert len(seqs) == len(set(seqs))
        steps = [e.data["output"] for e in everything if e.kind == "tool_call_end"]
        assert len(steps) == len(commands)
        assert not [e for e in everything if e.kind in EPHEMERAL_KINDS], "deltas were replayed"
