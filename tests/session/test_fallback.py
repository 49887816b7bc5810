"""A session with an ordered list of endpoints falls back when one fails.

Two scripted providers on loopback: the first speaks OpenAI Responses and fails, the
second speaks Anthropic Messages. The session completes on the second, the switch is
in its events, the history goes over converted for the new wire, and the calls after
the switch stay on the second endpoint.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.kernel import Runtime
from actors.mockllm import Fault, MockLLMServer, Script, ToolCallSpec, Turn, serve_mock_llm
from actors.models import RetryPolicy, open_gateway
from actors.models.config import Timeouts, Wire, endpoint
from actors.models.fallback import Route
from actors.session.actor import SessionActor
from actors.session.profiles import openai_profile
from environments.local import LocalEnvironment
from protocol.events import AssistantTextEndEvent, ModelFallbackEvent, SessionEvent
from protocol.session import Submit, Subscribe, WaitIdle

HANG_GUARD = 30
ALWAYS_500 = Script([Turn(fault=Fault(status=500, message="primary is down"))])
POLICY = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=1.0)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = Path(os.path.realpath(tmp_path)) / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    (work / "a.txt").write_text("alpha\n")
    return work


@asynccontextmanager
async def session_on(
    workdir: Path,
    first: Script,
    second: Script,
    first_wire: Wire = "openai_responses",
    second_wire: Wire = "anthropic",
) -> AsyncIterator[tuple[Any, MockLLMServer, MockLLMServer, list[SessionEvent]]]:
    timeouts = Timeouts(connect=5.0, request=30.0, stream_read=30.0)
    async with (
        Runtime(grace=3.0) as runtime,
        serve_mock_llm(first) as primary,
        serve_mock_llm(second) as backup,
    ):
        ep1 = endpoint(first_wire, primary.base_url, "k1", timeouts=timeouts)
        ep2 = endpoint(second_wire, backup.base_url, "k2", timeouts=timeouts)
        async with (
            open_gateway(runtime, ep1, POLICY) as gw1,
            open_gateway(runtime, ep2, POLICY) as gw2,
        ):
            env = await runtime.spawn(LocalEnvironment(workdir))
            routes = [Route(gw1), Route(gw2, model="claude-fallback")]
            actor = SessionActor(openai_profile("gpt-primary"), env, routes)
            ref = await runtime.spawn(actor, name=f"sessions/{actor.id}")
            events = await ref.ask(Subscribe())
            seen: list[SessionEvent] = []

            async def collect() -> None:
                async for event in events:
                    seen.append(event)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(collect)
                yield ref, primary, backup, seen
                nursery.cancel_scope.cancel()


async def run(ref: Any, text: str) -> None:
    await ref.tell(Submit(text))
    with trio.fail_after(HANG_GUARD):
        await ref.ask(WaitIdle(), timeout=None)
        await trio.sleep(0.05)  # let the subscription deliver the last events


async def test_a_primary_answering_500_every_time_completes_on_the_fallback(
    workdir: Path,
) -> None:
    backup_script = Script(
        [
            Turn(tool_calls=[ToolCallSpec("read_file", {"file_path": "notes.txt"})]),
            Turn(text="The notes say hello."),
            Turn(text="Still hello."),
        ],
        repeat=False,
    )
    async with session_on(workdir, ALWAYS_500, backup_script) as (ref, primary, backup, seen):
        await run(ref, "what do the notes say?")
        await run(ref, "and again?")  # the next input starts on the fallback
    switches = [e for e in seen if e.kind == "model_fallback"]
    assert len(switches) == 1
    switch = msgspec.to_builtins(switches[0].data)
    assert switch["from_wire"] == "openai_responses" and switch["to_wire"] == "anthropic"
    assert switch["from_model"] == "gpt-primary" and switch["to_model"] == "claude-fallback"
    assert switch["reason"] == "server" and "primary is down" in switch["message"]
    texts = [e.data.text for e in seen if isinstance(e.data, AssistantTextEndEvent) and e.data.text]
    assert texts == ["The notes say hello.", "Still hello."]
    assert not [e for e in seen if e.kind == "error"]
    # 1 attempt + 2 retries on the primary, then never again
    assert len(primary.requests) == 3
    bodies = [r.json() for r in backup.requests]
    assert all(r.path.endswith("/v1/messages") for r in backup.requests)
    assert all(body["model"] == "claude-fallback" for body in bodies)
    # the prompt names the fallback's model once the session has moved to it
    assert "Model: claude-fallback" in bodies[-1]["system"][0]["text"]
    second = bodies[1]["messages"]
    assert second[1]["content"][0]["type"] == "tool_use"
    assert second[2]["content"][0]["type"] == "tool_result"
    assert "hello" in str(second[2]["content"][0]["content"])


async def test_history_from_the_first_wire_is_converted_for_the_next(workdir: Path) -> None:
    first = Script(
        [
            Turn(
                reasoning="Look at the file first.",
                tool_calls=[ToolCallSpec("read_file", {"file_path": "a.txt"})],
            ),
            Turn(fault=Fault(status=503, message="overloaded")),
        ]
    )
    second = Script([Turn(text="Done on the fallback.")])
    async with session_on(workdir, first, second) as (ref, _, backup, seen):
        await run(ref, "read a.txt")
    assert [e.data.to_wire for e in seen if isinstance(e.data, ModelFallbackEvent)] == ["anthropic"]
    texts = [e.data.text for e in seen if isinstance(e.data, AssistantTextEndEvent) and e.data.text]
    assert texts == ["Done on the fallback."]
    body = backup.requests[0].json()
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assistant = body["messages"][1]["content"]
    # OpenAI's encrypted reasoning cannot go to Anthropic: its summary goes as text
    assert assistant[0] == {"type": "text", "text": "Look at the file first."}
    assert assistant[1]["type"] == "tool_use" and assistant[1]["name"] == "read_file"
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == assistant[1]["id"]
    assert "alpha" in str(result["content"])


async def test_a_bad_request_is_not_failed_over(workdir: Path) -> None:
    first = Script([Turn(fault=Fault(status=400, message="invalid_request: bad schema"))])
    second = Script([Turn(text="never")])
    async with session_on(workdir, first, second) as (ref, _, backup, seen):
        await run(ref, "hello")
    assert not [e for e in seen if e.kind == "model_fallback"]
    assert [e for e in seen if e.kind == "error"]
    assert not backup.requests
