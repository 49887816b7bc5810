"""Rewind and fork over the protocol, against a real server and the scripted
provider: what the model is sent afterwards is checked in the request bodies the
mock receives, and a rewind survives ``kill -9`` of ``troupe serve``."""

from __future__ import annotations

import signal
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.session.compaction import TRANSCRIPT_MARKER
from actors.session.history import REWOUND_HEADER
from protocol.client import RequestError, TroupeClient, connect
from protocol.session import RewindTurn, SessionConfig, UserTurn
from protocol.wire import (
    CreateSession,
    Event,
    Forked,
    ForkSession,
    GetSession,
    InterruptSession,
    RewindSession,
    Rewound,
    SessionCreated,
    SessionDetail,
    SubmitInput,
)
from tests.wire.conftest import (
    BOTH_STORES,
    HANG_GUARD,
    StartStack,
    events_until,
    subscribe,
    troupe_serve,
)

ANSWERS = {
    "turns": [{"text": "An answer."}],
    "conversations": [{"match": TRANSCRIPT_MARKER, "turns": [{"text": "Summary: they talked."}]}],
}
CONFIG = SessionConfig(policy="permissive")


async def ask(client: TroupeClient, session: str, text: str) -> list[Event]:
    """Submit ``text`` and wait for its end: its events (user_input first)."""
    await client.request(SubmitInput, session=session, text=text)
    return await events_until(client, "processing_end")


def seq_of(events: list[Event], kind: str) -> int:
    return next(event.seq for event in events if event.kind == kind)


def last_body(mock: MockLLMServer) -> bytes:
    return mock.requests[-1].body


async def new_session(client: TroupeClient) -> str:
    created = await client.request(CreateSession, config=CONFIG)
    assert isinstance(created, SessionCreated)
    await subscribe(client, created.session.session_id)
    return created.session.session_id


@BOTH_STORES
async def test_conversation_rewind_then_an_input_sends_the_cut_history(
    start_stack: StartStack,
) -> None:
    async with start_stack(ANSWERS) as stack, stack.client() as client:
        session = await new_session(client)
        await ask(client, session, "first question")
        second = await ask(client, session, "second question")
        await ask(client, session, "third question")
        to = seq_of(second, "user_input")

        reply = await client.request(RewindSession, session=session, to_seq=to)
        assert isinstance(reply, Rewound)
        assert reply.outcome.text == "second question"
        assert reply.outcome.mode == "conversation"
        assert (reply.outcome.turns_before, reply.outcome.turns_after) == (6, 2)
        rewind = (await events_until(client, "rewind"))[-1]
        assert rewind.data["to_seq"] == to and rewind.data["mode"] == "conversation"

        await ask(client, session, "another second question")
        body = last_body(stack.mock)
        assert b"first question" in body and b"another second question" in body
        assert b"second question" not in body.replace(b"another second question", b"")
        assert b"third question" not in body

        detail = await client.request(GetSession, session=session)
        assert isinstance(detail, SessionDetail)
        users = [t.content for t in detail.history if isinstance(t, UserTurn)]
        assert users == ["first question", "another second question"]

        with pytest.raises(RequestError) as refused:  # cut: no longer an input to go back to
            await client.request(RewindSession, session=session, to_seq=to)
        assert refused.value.code == "invalid_request"


async def test_summarize_from_here_replaces_the_cut_part_with_a_summary(
    start_stack: StartStack,
) -> None:
    async with start_stack(ANSWERS) as stack, stack.client() as client:
        session = await new_session(client)
        await ask(client, session, "first question")
        second = await ask(client, session, "second question")
        await ask(client, session, "third question")

        reply = await client.request(
            RewindSession, session=session, to_seq=seq_of(second, "user_input"), summarize=True
        )
        assert isinstance(reply, Rewound) and reply.outcome.summarized
        summary_request = last_body(stack.mock)
        assert TRANSCRIPT_MARKER.encode() in summary_request
        assert b"third question" in summary_request and b"first question" not in summary_request

        await ask(client, session, "go on")
        body = last_body(stack.mock)
        assert REWOUND_HEADER[:40].encode() in body and b"Summary: they talked." in body
        assert b"first question" in body
        assert b"second question" not in body and b"third question" not in body


async def test_a_rewind_while_processing_is_refused(start_stack: StartStack) -> None:
    slow = {"turns": [{"text": "slow", "delay": 60}]}
    async with start_stack(slow) as stack, stack.client() as client:
        session = await new_session(client)
        await client.request(SubmitInput, session=session, text="take your time")
        started = await events_until(client, "user_input")
        with pytest.raises(RequestError) as refused:
            await client.request(
                RewindSession, session=session, to_seq=seq_of(started, "user_input")
            )
        assert refused.value.code == "session_busy"
        await client.request(InterruptSession, session=session, immediate=True)
        await events_until(client, "processing_end")
        reply = await client.request(
            RewindSession, session=session, to_seq=seq_of(started, "user_input")
        )
        assert isinstance(reply, Rewound) and reply.outcome.turns_after == 0


@BOTH_STORES
async def test_a_fork_from_an_assistant_message_diverges_from_the_original(
    start_stack: StartStack,
) -> None:
    async with start_stack(ANSWERS) as stack, stack.client() as client:
        session = await new_session(client)
        first = await ask(client, session, "first question")
        await ask(client, session, "second question")

        forked = await client.request(
            ForkSession, session=session, at_seq=seq_of(first, "assistant_text_end")
        )
        assert isinstance(forked, Forked) and forked.turns == 2
        fork = forked.session.session_id
        at = seq_of(first, "assistant_text_end")
        assert fork != session and forked.session.forked_from == f"{session}@{at}"
        await subscribe(client, fork)
        origin = await events_until(client, "forked_from")
        assert origin[-1].data["source"] == session

        await ask(client, fork, "a question only the fork gets")
        fork_body = last_body(stack.mock)
        await ask(client, session, "a question only the original gets")
        original_body = last_body(stack.mock)

    assert b"first question" in fork_body and b"a question only the fork gets" in fork_body
    assert b"second question" not in fork_body
    assert b"only the original" not in fork_body
    assert b"second question" in original_body and b"only the fork" not in original_body


@BOTH_STORES
async def test_a_rewind_survives_sigkill_of_the_server(tmp_path: Path, store: str) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    work = root / "work"
    work.mkdir()
    data = root / "data"
    script = msgspec.convert(ANSWERS, Script)
    async with serve_mock_llm(script) as mock:
        async with troupe_serve(data, work, mock.base_url, store) as serve:
            token = (data / "token").read_text().strip()
            async with connect(serve.url, token) as client:
                session = await new_session(client)
                await ask(client, session, "first question")
                second = await ask(client, session, "second question")
                reply = await client.request(
                    RewindSession, session=session, to_seq=seq_of(second, "user_input")
                )
                assert isinstance(reply, Rewound)
                await events_until(client, "rewind")
            serve.process.send_signal(signal.SIGKILL)
            with trio.fail_after(HANG_GUARD):
                await serve.process.wait()

        async with (
            troupe_serve(data, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            detail = await client.request(GetSession, session=session)
            assert isinstance(detail, SessionDetail)
            assert [t.content for t in detail.history if isinstance(t, UserTurn)] == [
                "first question"
            ]
            await subscribe(client, session, after_seq=detail.session.last_seq)
            await ask(client, session, "after the restart")
            body = last_body(mock)
            assert b"first question" in body and b"after the restart" in body
            assert b"second question" not in body
            detail = await client.request(GetSession, session=session)
            assert isinstance(detail, SessionDetail)
            assert not any(isinstance(t, RewindTurn) for t in detail.history)


async def test_a_summary_the_model_cannot_write_rewinds_nothing(start_stack: StartStack) -> None:
    failing = {
        "turns": [{"text": "An answer."}],
        "conversations": [
            {"match": TRANSCRIPT_MARKER, "turns": [{"fault": {"status": 400, "message": "no"}}]}
        ],
    }
    async with start_stack(failing) as stack, stack.client() as client:
        session = await new_session(client)
        await ask(client, session, "first question")
        second = await ask(client, session, "second question")
        with pytest.raises(RequestError) as refused:
            await client.request(
                RewindSession, session=session, to_seq=seq_of(second, "user_input"),
                summarize=True,
            )  # fmt: skip
        assert refused.value.code == "summary_failed"
        detail = await client.request(GetSession, session=session)
        assert isinstance(detail, SessionDetail) and len(detail.history) == 4
        await ask(client, session, "still here?")  # the session goes on as it was
        assert b"second question" in last_body(stack.mock)
