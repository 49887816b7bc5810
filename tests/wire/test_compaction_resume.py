"""A compacted session survives ``kill -9`` of ``troupe serve``: resumed, it sends
the model byte for byte the requests an uninterrupted run sends, its history
rebuilt from the stored compaction turns without asking for a summary again.

Two runs with the same script, working directory and settings: one is never
interrupted; the other's server is killed with SIGKILL after the first input
(which pruned and summarized), then started again on the same data directory.
The second input's requests (built on the stored summary and pruning stubs, and
compacting again as it goes) are compared as the mock received them."""

from __future__ import annotations

import signal
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.session.compaction import COMPACTION_PROMPT, TRANSCRIPT_MARKER
from actors.session.context_view import SUMMARY_HEADER
from protocol.client import TroupeClient, connect
from protocol.session import CompactionTurn, SessionConfig
from protocol.wire import (
    CreateSession,
    GetSession,
    InterruptSession,
    SessionCreated,
    SessionDetail,
    SubmitInput,
)
from tests.event_schema import check_event_frame
from tests.wire.conftest import HANG_GUARD, subscribe, troupe_serve


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


WINDOW = 12_000
SCRIPT = msgspec.convert(
    {
        "rounds": 80,
        "rounds_tool": "read_file",
        "rounds_arguments": {"file_path": "big.txt"},
        "context_window": WINDOW,
        "conversations": [{"match": TRANSCRIPT_MARKER, "turns": [{"text": "Summary: reads."}]}],
    },
    Script,
)
CONFIG = SessionConfig(
    policy="permissive", enable_loop_detection=False, context_window=WINDOW,
    max_tool_rounds_per_input=40,
)  # fmt: skip
"""The first input stops at 40 rounds (a limit), the second does the other 40:
the server is killed in the middle of the 80-round task."""


async def events_until(client: TroupeClient, kind: str) -> None:
    """Up to the first ``kind`` event (a 40-round input: a longer hang guard)."""
    with trio.fail_after(HANG_GUARD * 6):
        async for event in client.events():
            check_event_frame(event)
            if event.kind == kind:
                return
    raise AssertionError(f"the connection ended before {kind}")


async def first_input(client: TroupeClient) -> str:
    created = await client.request(CreateSession, config=CONFIG)
    assert isinstance(created, SessionCreated)
    session = created.session.session_id
    await subscribe(client, session)
    await client.request(SubmitInput, session=session, text="run the rounds")
    await events_until(client, "processing_end")
    return session


async def second_input(
    client: TroupeClient, session: str, mock: MockLLMServer, after_seq: int | None = None
) -> list[bytes]:
    """The request bodies the second input sends (``after_seq``: subscribe first)."""
    before = len(mock.requests)
    if after_seq is not None:
        await subscribe(client, session, after_seq=after_seq)
    await client.request(SubmitInput, session=session, text="one more thing")
    await events_until(client, "user_input")
    await events_until(client, "processing_end")
    return [r.body for r in mock.requests[before:]]


def summaries(bodies: list[bytes]) -> int:
    return sum(1 for body in bodies if COMPACTION_PROMPT[:40].encode() in body)


async def test_a_resume_after_sigkill_sends_the_requests_of_an_uninterrupted_run(
    tmp_path: Path, store: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    work = root / "work"
    work.mkdir()
    (work / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(160)))

    async with serve_mock_llm(SCRIPT) as mock:
        data = root / "kept"
        async with (
            troupe_serve(data, work, mock.base_url, store) as serve,
            connect(serve.url, (data / "token").read_text().strip()) as client,
        ):
            kept_session = await first_input(client)
            first_count = len(mock.requests)
            kept = await second_input(client, kept_session, mock)

    async with serve_mock_llm(SCRIPT) as mock:
        data = root / "killed"
        async with troupe_serve(data, work, mock.base_url, store) as serve:
            token = (data / "token").read_text().strip()
            async with connect(serve.url, token) as client:
                session = await first_input(client)
            serve.process.send_signal(signal.SIGKILL)
            with trio.fail_after(HANG_GUARD):
                await serve.process.wait()
        assert len(mock.requests) == first_count
        first_summaries = summaries([r.body for r in mock.requests])
        assert first_summaries > 0, "the first input summarized"
        async with (
            troupe_serve(data, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            detail = await client.request(GetSession, session=session)
            assert isinstance(detail, SessionDetail)
            assert any(isinstance(t, CompactionTurn) and t.summary for t in detail.history)
            resumed = await second_input(client, session, mock, after_seq=detail.session.last_seq)

    assert len(resumed) == len(kept) > 40
    assert summaries(kept) > 0, "the second input compacted again"
    assert SUMMARY_HEADER.encode() in resumed[-1] and b"output elided" in resumed[-1]
    same = [body.replace(kept_session.encode(), session.encode()) for body in kept]
    assert resumed == same
    assert summaries(resumed) == summaries(kept), "no summary asked for again"


class HoldAt:
    """The mock's hold (``MockLLMServer.hold``): the request ``then`` requests
    after the ``n``-th summary request (0: that summary request itself)."""

    def __init__(self, n: int, then: int) -> None:
        self.n, self.then = n, then
        self.marks: list[int] = []

    def __call__(self, mock: MockLLMServer) -> bool:
        index = len(mock.requests) - 1
        if COMPACTION_PROMPT[:40].encode() in mock.requests[-1].body:
            self.marks.append(index)
        return len(self.marks) >= self.n and index == self.marks[self.n - 1] + self.then


async def held(mock: MockLLMServer, hold: HoldAt) -> int:
    """Hold the chosen request; the number of requests once it is held."""
    mock.hold = hold
    with trio.fail_after(HANG_GUARD * 6):
        await mock.wait_until(lambda server: server.holding == 1)
    return len(mock.requests)


@pytest.mark.parametrize(
    ("n", "then"),
    [(1, 3), (2, 0)],
    ids=["during-a-round's-model-call", "during-a-summary-call"],
)
async def test_sigkill_during_a_model_call_resumes_with_the_history_of_a_live_server(
    tmp_path: Path, n: int, then: int, store: str
) -> None:
    """The kill comes while the model is being asked (a round's call, or the call
    that writes a compaction's summary), not between inputs. The same session on a
    server that stays up, its call interrupted at the same point, is the reference:
    its next input's requests and the resumed session's are byte for byte the same
    (the in-flight call left nothing behind in either), and so is the held call."""
    root = Path(await trio.Path(tmp_path).resolve())
    work = root / "work"
    work.mkdir()
    (work / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(160)))

    async with serve_mock_llm(SCRIPT) as mock:
        data = root / "live"
        async with (
            troupe_serve(data, work, mock.base_url) as serve,
            connect(serve.url, (data / "token").read_text().strip()) as client,
        ):
            created = await client.request(CreateSession, config=CONFIG)
            assert isinstance(created, SessionCreated)
            live_session = created.session.session_id
            await subscribe(client, live_session)
            await client.request(SubmitInput, session=live_session, text="run the rounds")
            at = await held(mock, HoldAt(n, then))
            await client.request(InterruptSession, session=live_session, immediate=True)
            await events_until(client, "processing_end")
            mock.release()
            in_flight = mock.requests[at - 1].body
            live = await second_input(client, live_session, mock)

    async with serve_mock_llm(SCRIPT) as mock:
        data = root / "killed"  # the store of this server is the one under test
        async with troupe_serve(data, work, mock.base_url, store) as serve:
            token = (data / "token").read_text().strip()
            async with connect(serve.url, token) as client:
                created = await client.request(CreateSession, config=CONFIG)
                assert isinstance(created, SessionCreated)
                session = created.session.session_id
                await client.request(SubmitInput, session=session, text="run the rounds")
                assert await held(mock, HoldAt(n, then)) == at
                serve.process.send_signal(signal.SIGKILL)
                with trio.fail_after(HANG_GUARD):
                    await serve.process.wait()
        mock.release()
        assert len(mock.requests) == at
        killed_in_flight = mock.requests[at - 1].body
        async with (
            troupe_serve(data, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            detail = await client.request(GetSession, session=session)
            assert isinstance(detail, SessionDetail)
            assert detail.session.interrupted
            stored = [t for t in detail.history if isinstance(t, CompactionTurn) and t.summary]
            assert len(stored) == n - 1 if then == 0 else n  # a summary cut short is not kept
            resumed = await second_input(client, session, mock, after_seq=detail.session.last_seq)

    assert killed_in_flight == in_flight.replace(live_session.encode(), session.encode())
    assert len(resumed) == len(live) > 1
    assert summaries([in_flight]) == (then == 0)
    if then == 0:
        assert summaries(resumed) >= 1, "the summary cut short is asked for again"
    assert resumed == [body.replace(live_session.encode(), session.encode()) for body in live]
