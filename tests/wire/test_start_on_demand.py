"""A new session's actor starts with its first input, subscription or request
(issue 37): until then ``troupe serve`` holds a row and a record whose hub has
announced ``session_start``. A client sees what it saw when the actor started
with the session: the session listed live, one ``session_start``, numbers with
no gap, an interrupt or abort that work as on a started session."""

from __future__ import annotations

from protocol.wire import (
    AbortSession,
    CreateSession,
    GetSession,
    InterruptSession,
    ListSessions,
    SubmitInput,
)
from tests.wire.conftest import BOTH_STORES, StartStack, events_until, subscribe


@BOTH_STORES
async def test_a_new_session_is_announced_and_its_actor_starts_with_its_first_request(
    start_stack: StartStack,
) -> None:
    script = {"turns": [{"text": "Hello."}], "repeat": True}
    async with start_stack(script) as stack, stack.client() as client:
        created = (await client.request(CreateSession)).session
        session = created.session_id
        assert (created.status, created.last_seq) == ("live", 1)
        assert stack.server.registry.record(session).ref is None  # no actor yet
        (listed,) = (await client.request(ListSessions)).sessions
        # the list reads the store, whose reserved numbers run ahead: not taken here
        assert (listed.status, listed.last_seq) == ("live", 1)
        await subscribe(client, session, after_seq=0)
        await client.request(SubmitInput, session=session, text="hi")
        events = await events_until(client, "processing_end")
        durable = [e for e in events if e.seq]
        assert [e.seq for e in durable] == list(range(1, len(durable) + 1))
        assert [e.kind for e in durable].count("session_start") == 1
        assert durable[0].kind == "session_start"
        assert durable[0].data["working_directory"] == str(stack.work)
        assert stack.server.registry.record(session).ref is not None
        detail = await client.request(GetSession, session=session)
        assert detail.session.last_seq == durable[-1].seq


async def test_interrupt_and_abort_reach_a_session_not_started_yet(
    start_stack: StartStack,
) -> None:
    async with start_stack() as stack, stack.client() as client:
        first = (await client.request(CreateSession)).session.session_id
        await client.request(InterruptSession, session=first)  # as on an idle session
        second = (await client.request(CreateSession)).session.session_id
        await client.request(AbortSession, session=second, reason="not needed")
        await subscribe(client, second, after_seq=0)
        ended = await events_until(client, "session_end")
        assert next(e.kind for e in ended if e.seq) == "session_start"
        assert (await client.request(GetSession, session=second)).session.state == "closed"
        assert (await client.request(GetSession, session=first)).session.state == "idle"
