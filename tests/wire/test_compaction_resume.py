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
from protocol.wire import CreateSession, GetSession, SessionCreated, SessionDetail, SubmitInput
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
