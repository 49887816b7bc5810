"""Compaction in real sessions against the scripted provider with a small context
window: the mock counts each request (its body over four) and answers past its
window with the wire's real context-overflow error.

- a 300-round session with large tool outputs completes, pruning and summarizing
  as it goes, and no request it sends is ever refused;
- a session started again from the stored history (with its compaction turns)
  sends byte for byte the request the uninterrupted one sends, and never asks the
  model for a summary again;
- on every wire, the provider's context-overflow error compacts once and the
  request is sent again, instead of ending the input;
- ``compaction = "off"`` leaves the overflow to end the input, as before;
- a manual ``compact`` with instructions summarizes even under the threshold.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.kernel import ActorRef, Runtime
from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.models import RetryPolicy, open_gateway
from actors.models.config import Endpoint, Timeouts, endpoint
from actors.models.endpoints import bedrock_endpoint
from actors.session.actor import SessionActor
from actors.session.compaction import COMPACTION_PROMPT, TRANSCRIPT_MARKER
from actors.session.context_view import SUMMARY_HEADER, ContextView
from actors.session.profiles import PROFILES
from environments.local import LocalEnvironment
from protocol.events import (
    CompactionEndEvent,
    CompactionStartEvent,
    SessionEvent,
    WarningEvent,
)
from protocol.session import (
    Compact,
    CompactionOutcome,
    CompactionTurn,
    GetSnapshot,
    SessionConfig,
    SessionOutcome,
    SessionSnapshot,
    Submit,
    Subscribe,
    ToolResultsTurn,
    Turn,
    WaitIdle,
)
from tests.waiting import TEST_KILL_GRACE

SUMMARY = "Summary: the agent read big.txt round after round; nothing is left to do."
BIG_FILE = "".join(f"line {i} of the big file, with a few words on it\n" for i in range(100))
GUARD = 120


def script(rounds: int, window: int) -> Script:
    """``rounds`` reads of big.txt (~5 KB each), answered within ``window`` tokens,
    and a conversation that answers every summary request."""
    return msgspec.convert(
        {
            "rounds": rounds,
            "rounds_tool": "read_file",
            "rounds_arguments": {"file_path": "big.txt"},
            "context_window": window,
            "conversations": [{"match": TRANSCRIPT_MARKER, "turns": [{"text": SUMMARY}]}],
        },
        Script,
    )


class Run:
    def __init__(self, ref: ActorRef, server: MockLLMServer, events: Any) -> None:
        self.ref = ref
        self.server = server
        self.events = events
        self.seen: list[SessionEvent] = []

    async def input(self, text: str) -> SessionOutcome:
        await self.ref.tell(Submit(text))
        with trio.fail_after(GUARD):
            outcome = await self.ref.ask(WaitIdle(), timeout=None)
            await self.drain()
        return outcome

    async def drain(self) -> None:
        async for event in self.events:
            self.seen.append(event)
            if event.kind in ("processing_end", "session_end"):
                return

    def of(self, kind: type[Any]) -> list[Any]:
        return [e.data for e in self.seen if isinstance(e.data, kind)]

    async def history(self) -> list[Turn]:
        snapshot: SessionSnapshot = await self.ref.ask(GetSnapshot())
        return snapshot.history

    def bodies(self) -> list[bytes]:
        return [r.body for r in self.server.requests]

    def summary_requests(self) -> int:
        return sum(1 for r in self.server.requests if COMPACTION_PROMPT[:40].encode() in r.body)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = Path(os.path.realpath(tmp_path)) / "work"
    work.mkdir()
    (work / "big.txt").write_text(BIG_FILE)
    return work


@asynccontextmanager
async def session(
    workdir: Path,
    mock: MockLLMServer,
    config: SessionConfig,
    wire: str = "anthropic",
    profile: str = "anthropic",
    history: list[Turn] | None = None,
) -> AsyncIterator[Run]:
    async with AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(Runtime(grace=3.0, kill_grace=TEST_KILL_GRACE))
        timeouts = Timeouts(connect=5.0, request=30.0, stream_read=30.0)
        if wire == "bedrock":
            ep: Endpoint = bedrock_endpoint(
                "us-east-1", base_url=mock.base_url, access_key_id="AKIDEXAMPLE",
                secret_access_key="secret",
            )  # fmt: skip
        else:
            ep = endpoint(wire, mock.base_url, "test-key", timeouts=timeouts)  # type: ignore[arg-type]
        policy = RetryPolicy(max_retries=0)
        gateway = await stack.enter_async_context(open_gateway(runtime, ep, policy))
        env = await runtime.spawn(LocalEnvironment(workdir), name="environments/local")
        actor = SessionActor(PROFILES[profile](), env, gateway, config, history=history)
        ref = await runtime.spawn(actor, name=f"sessions/{actor.id}")
        yield Run(ref, mock, await ref.ask(Subscribe(buffer=1 << 16, buffer_bytes=1 << 28)))


def base_config(**changes: Any) -> SessionConfig:
    return SessionConfig(policy="permissive", enable_loop_detection=False, **changes)


async def test_300_rounds_in_a_small_window_complete_with_prunings_and_summaries(
    workdir: Path,
) -> None:
    window = 16_000
    config = base_config(context_window=window)
    async with serve_mock_llm(script(300, window)) as mock, session(workdir, mock, config) as run:
        outcome = await run.input("run the rounds")
        history = await run.history()
    assert outcome.success and outcome.output == "done"
    rounds = [t for t in history if isinstance(t, ToolResultsTurn)]
    assert len(rounds) == 300
    compactions = [t for t in history if isinstance(t, CompactionTurn)]
    prunes = [t for t in compactions if t.summary is None]
    summaries = [t for t in compactions if t.summary is not None]
    assert prunes and summaries, "both steps happened"
    assert len(summaries) == run.summary_requests()
    ended = run.of(CompactionEndEvent)
    assert len(run.of(CompactionStartEvent)) == len(ended) >= len(summaries)
    assert all(e.tokens_after < e.tokens_before for e in ended)
    # Every request fit: the mock never had to refuse one as too long.
    assert not [w for w in run.of(WarningEvent) if w.category == "context_length"]
    assert max(len(body) // 4 for body in run.bodies()) <= window
    # The last request carries the latest summary and stubs for old outputs.
    last = run.bodies()[-1].decode()
    assert SUMMARY_HEADER in last and "output elided to save context: read_file" in last
    assert "run the rounds" in last  # the first input stays


async def test_a_session_started_from_the_stored_history_sends_the_same_request(
    workdir: Path,
) -> None:
    """What a resume does: the history (compaction turns included) is all there is.
    The follow-up request is byte-identical to the uninterrupted session's, and no
    summary is asked for again."""
    window = 12_000
    config = base_config(context_window=window)
    async with serve_mock_llm(script(40, window)) as mock:
        async with session(workdir, mock, config) as first:
            await first.input("run the rounds")
            stored = await first.history()
            assert any(isinstance(t, CompactionTurn) and t.summary for t in stored)
            await first.input("one more thing")
            uninterrupted = first.bodies()[-1]
        summaries = first.summary_requests()
        async with session(workdir, mock, config, history=stored) as resumed:
            await resumed.input("one more thing")
        assert first.summary_requests() == summaries, "the resume asked for no summary"
        assert mock.requests[-1].body == uninterrupted


def test_the_view_is_rebuilt_from_the_history_alone() -> None:
    """Converting a compacted history incrementally and all at once agree."""
    from protocol.llm import ToolCall, ToolResult, Usage
    from protocol.session import AssistantTurn, UserTurn

    history: list[Turn] = [UserTurn("task", 1.0)]
    for n in range(6):
        call = ToolCall(f"c{n}", "read_file", {"file_path": "x"}, '{"file_path": "x"}')
        history.append(AssistantTurn("", [call], None, Usage(1, 1), None, 1.0))
        history.append(ToolResultsTurn([ToolResult(f"c{n}", "x" * 500, False, "read_file")], 1.0))
    incremental = ContextView()
    incremental.messages(history[:5])
    history.append(CompactionTurn(None, 0, 0, 5, 0, 0, 1.0))
    history.append(CompactionTurn("the summary", 1, 7, 9, 0, 0, 1.0))
    whole = ContextView().messages(history)
    assert incremental.messages(history) == whole
    texts = [m.text for m in whole]
    assert texts[0] == "task" and "the summary" in texts[1]
    assert len(whole) == 2 + 2 * 3  # the turns from index 7 on: 3 calls, 3 results
    assert "elided" in str(whole[3].content)  # index 8 < 9: pruned
    assert "elided" not in str(whole[5].content)


WIRES = [
    ("openai_responses", "openai"),
    ("openai_chat", "openai"),
    ("anthropic", "anthropic"),
    ("gemini", "gemini"),
    ("bedrock", "anthropic"),
    ("bedrock_converse", "anthropic"),
]


@pytest.mark.parametrize(("wire", "profile"), WIRES, ids=[w for w, _ in WIRES])
async def test_a_context_overflow_compacts_once_and_retries(
    workdir: Path, wire: str, profile: str
) -> None:
    """The session does not know the window (it believes it is huge): the provider's
    own overflow error is what makes it compact, once, and send the request again."""
    window = 9_000
    config = base_config(
        context_window=1_000_000, compaction_keep_turns=2, compaction_keep_rounds=1,
        model="anthropic.claude-sonnet-4-5-v1:0" if wire == "bedrock" else None,
    )  # fmt: skip
    async with (
        serve_mock_llm(script(8, window)) as mock,
        session(workdir, mock, config, wire, profile) as run,
    ):
        outcome = await run.input("run the rounds")
        history = await run.history()
    assert outcome.success, outcome.error
    overflows = [w for w in run.of(WarningEvent) if w.category == "context_length"]
    starts = run.of(CompactionStartEvent)
    assert overflows and len(starts) == len(overflows)
    assert {s.reason for s in starts} == {"overflow"}
    assert {e.compaction for e in run.of(CompactionEndEvent)} == {"summary"}
    assert sum(1 for t in history if isinstance(t, CompactionTurn) and t.summary) == len(starts)
    refused = [b for b in run.bodies() if len(b) // 4 > window]
    assert len(refused) == len(overflows)
    assert len([t for t in history if isinstance(t, ToolResultsTurn)]) == 8


async def test_with_compaction_off_an_overflow_ends_the_input(workdir: Path) -> None:
    window = 9_000
    config = base_config(context_window=1_000_000, compaction="off")
    async with serve_mock_llm(script(8, window)) as mock, session(workdir, mock, config) as run:
        outcome = await run.input("run the rounds")
    assert not outcome.success and outcome.stop_reason == "error"
    assert "prompt is too long" in (outcome.error or "")
    assert not run.of(CompactionStartEvent) and run.summary_requests() == 0


async def test_manual_compact_with_instructions(workdir: Path) -> None:
    config = base_config(compaction="manual", compaction_keep_turns=1)
    async with serve_mock_llm(script(4, 1_000_000)) as mock, session(workdir, mock, config) as run:
        await run.input("run the rounds")
        assert not run.of(CompactionStartEvent), "manual: never on its own"
        with trio.fail_after(GUARD):
            outcome: CompactionOutcome = await run.ref.ask(
                Compact("keep the file names"), timeout=None
            )
        assert outcome.kind == "summary" and outcome.tokens_after < outcome.tokens_before
        summary_request = next(r for r in mock.requests if TRANSCRIPT_MARKER.encode() in r.body)
        assert b"keep the file names" in summary_request.body
        assert b'"tools"' not in summary_request.body
        await run.input("and now?")
    assert SUMMARY_HEADER.encode() in mock.requests[-1].body
    assert [s.reason for s in run.of(CompactionStartEvent)] == ["manual"]
