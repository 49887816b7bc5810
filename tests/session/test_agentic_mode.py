"""Agentic mode on the one session (agentic-behavior-tool.md 2-4): the model enters
it with ``enter_agentic_mode``, the state block sits just before the latest user
prompt of each request (never in history), the tracker follows the real tool
results, ``complete`` ends it with its status, the iteration limit stops it.
Real sessions against ``troupe mock-llm`` over loopback HTTP; the requests the
mock received are what the assertions read."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from actors.session.agentic_mode import KEEP_GOING, limit_message
from protocol.events import (
    AgenticEndEvent,
    AgenticIterationEvent,
    AgenticStartEvent,
    SteeringInjectedEvent,
    TurnLimitEvent,
)
from protocol.session import ExtendLimit, GetSnapshot, SessionConfig, WaitIdle
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import body_text, call, tool_names, turns

AGENTIC = SessionConfig(agentic_mode=True)
PROMPT = "make a greeting file"
ENTER = call("enter_agentic_mode", user_prompt=PROMPT, objective="greeting.txt says hi")


def parts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """Every content block of an Anthropic request, in order, as (role, text).
    The wire merges consecutive user messages, so the block and the prompt can be
    two blocks of one message: the order of blocks is what placement means."""
    found: list[tuple[str, str]] = []
    for message in body["messages"]:
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        found.extend((message["role"], body_text(block)) for block in blocks)
    return found


def state_blocks(body: dict[str, Any]) -> list[tuple[int, str]]:
    return [(i, text) for i, (_, text) in enumerate(parts(body)) if "<agentic_state>" in text]


def prompt_index(body: dict[str, Any], prompt: str = PROMPT) -> int:
    """The latest user prompt: the last user block carrying the user's words."""
    found = [
        i
        for i, (role, text) in enumerate(parts(body))
        if role == "user" and prompt in text and "<agentic_state>" not in text
        and '"tool_result"' not in text
    ]  # fmt: skip
    return found[-1]


def block_of(body: dict[str, Any]) -> str:
    (only,) = state_blocks(body)
    return only[1].encode().decode("unicode_escape")


async def test_the_state_block_before_the_prompt_follows_each_iteration(
    start_agent: StartAgent,
) -> None:
    script = turns(
        [ENTER],
        [call("write_file", file_path="greeting.txt", content="hi\n")],
        [call("shell", command="cat greeting.txt; exit 3")],
        "Checking where I am.",
        [call("complete", result="greeting.txt says hi", status="success")],
        "never asked for",
    )
    async with start_agent("anthropic", script, AGENTIC) as agent:
        await agent.run(PROMPT)
        bodies = agent.request_bodies()
        assert len(bodies) == 5
        assert {"enter_agentic_mode", "complete"} <= tool_names(bodies[0])
        assert state_blocks(bodies[0]) == []  # not in agentic mode yet
        for body in bodies[1:]:
            # One block, in the message just before the latest user prompt.
            assert body_text(body).count("agentic_state>") == 2
            assert state_blocks(body)[0][0] == prompt_index(body) - 1
        first, second, third, fourth = (block_of(body) for body in bodies[1:])
        assert f"Original prompt: {PROMPT}" in first
        assert "Objective: greeting.txt says hi" in first
        assert "Iteration: 1 of 25" in first
        assert "Files modified this session: none" in first
        assert "Last command" not in first
        assert "Iteration: 2 of 25" in second
        assert "Files modified this session: greeting.txt" in second
        assert "Iteration: 3 of 25" in third
        assert "Last command: cat greeting.txt; exit 3" in third
        assert "Exit code: 3" in third
        assert f"Working directory: {agent.workdir}" in third
        assert "Last output (end):\nhi" in third
        assert "Iteration: 4 of 25" in fourth and "Exit code: 3" in fourth
        # The text-only answer did not end the loop: the model was told to go on.
        assert agent.of(SteeringInjectedEvent) == [SteeringInjectedEvent(KEEP_GOING)]
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == "greeting.txt says hi"
        assert outcome.success and outcome.completion_status == "success"
        history = (await agent.ref.ask(GetSnapshot())).history
        assert "agentic_state" not in body_text(history)  # never stored
        assert agent.of(AgenticStartEvent) == [
            AgenticStartEvent(PROMPT, "greeting.txt says hi", 25)
        ]
        assert [e.iteration for e in agent.of(AgenticIterationEvent)] == [1, 2, 3, 4]
        assert agent.of(AgenticEndEvent) == [AgenticEndEvent("success", "greeting.txt says hi", 4)]


async def test_the_block_moves_to_the_latest_prompt_of_a_later_request(
    start_agent: StartAgent,
) -> None:
    script = turns(
        "Hello.",
        [ENTER],
        [call("complete", result="done", status="success")],
        "plain answer",
    )
    async with start_agent("anthropic", script, AGENTIC) as agent:
        await agent.run("say hello")
        await agent.run(PROMPT)
        await agent.run("and now?")
        bodies = agent.request_bodies()
        assert len(bodies) == 4
        (block,) = state_blocks(bodies[2])
        assert block[0] == prompt_index(bodies[2]) - 1 == 2  # after "say hello", "Hello."
        # complete() left agentic mode: the next input has no block.
        assert state_blocks(bodies[3]) == []


@pytest.mark.parametrize("status", ["success", "failure", "partial"])
async def test_complete_ends_the_loop_with_each_status(
    start_agent: StartAgent, status: str
) -> None:
    script = turns(
        [ENTER],
        [call("complete", result=f"result: {status}", status=status)],
        "never asked for",
    )
    async with start_agent("anthropic", script, AGENTIC) as agent:
        await agent.run(PROMPT)
        assert len(agent.request_bodies()) == 2
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == f"result: {status}"
        assert outcome.completion_status == status
        assert outcome.stop_reason == "completed"
        assert outcome.success == (status == "success")
        assert agent.of(AgenticEndEvent) == [AgenticEndEvent(status, f"result: {status}", 1)]  # type: ignore[arg-type]


async def test_a_bad_status_is_an_error_the_model_corrects(start_agent: StartAgent) -> None:
    script = turns(
        [ENTER],
        [call("complete", result="done", status="finished")],
        [call("complete", result="done", status="success")],
    )
    async with start_agent("anthropic", script, AGENTIC) as agent:
        await agent.run(PROMPT)
        assert len(agent.request_bodies()) == 3
        assert "status" in body_text(agent.request_bodies()[2]["messages"][-1])
        assert (await agent.ref.ask(WaitIdle())).completion_status == "success"


async def test_the_iteration_limit_ends_with_the_last_response(start_agent: StartAgent) -> None:
    working = {"text": "still working", "tool_calls": [call("shell", command="true")]}
    script = {"turns": [{"tool_calls": [ENTER]}, working], "repeat": True}
    config = SessionConfig(agentic_mode=True, agentic_max_iterations=3, enable_loop_detection=False)
    async with start_agent("anthropic", script, config) as agent:
        await agent.run(PROMPT)
        bodies = agent.request_bodies()
        assert len(bodies) == 4  # entering, then three iterations
        assert "Iteration: 3 of 3" in block_of(bodies[3])
        shown = f"still working\n\n{limit_message(3)}"
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == shown and "iteration limit reached" in shown
        assert outcome.stop_reason == "turn_limit" and not outcome.success
        assert agent.of(TurnLimitEvent) == [TurnLimitEvent("agentic_max_iterations", round=3)]
        assert agent.of(AgenticEndEvent) == [AgenticEndEvent("iteration_limit", shown, 3)]
        # The user extends the limit: the same agentic loop goes on.
        assert (await agent.ref.ask(ExtendLimit(1))).agentic_max_iterations == 4
        with trio.fail_after(HANG_GUARD):
            await agent.ref.ask(WaitIdle(), timeout=None)
            await agent.drain_until("processing_end")
        bodies = agent.request_bodies()
        assert len(bodies) == 5 and "Iteration: 4 of 4" in block_of(bodies[4])


async def test_agentic_tools_are_off_by_default(start_agent: StartAgent) -> None:
    async with start_agent("anthropic", turns("hello")) as agent:
        await agent.run("hi")
        assert not {"enter_agentic_mode", "complete"} & tool_names(agent.request_bodies()[0])


async def test_the_block_follows_the_persistent_terminal_and_patches(
    start_agent: StartAgent,
) -> None:
    config = SessionConfig(agentic_mode=True, terminal_tool=True)
    patch = "*** Begin Patch\n*** Add File: notes/a.txt\n+one\n*** End Patch"
    update = "*** Begin Patch\n*** Update File: notes/a.txt\n@@\n-one\n+two\n*** End Patch"
    script = turns(
        [ENTER],
        [call("terminal", command="mkdir -p sub && cd sub && echo in-sub", persistent=True)],
        [call("apply_patch", patch=patch)],
        [call("apply_patch", patch=update)],
        [call("terminal", close=True)],
        [call("complete", result="ok", status="success")],
    )  # fmt: skip
    async with start_agent("openai", script, config) as agent:
        await agent.run(PROMPT)
        bodies = agent.request_bodies()
        assert len(bodies) == 6
        blocks = [b for b in (_block_in(body) for body in bodies[1:]) if b]
        assert len(blocks) == 5
        after_cd, after_patch, after_update, after_close = blocks[1:]
        assert f"Working directory: {agent.workdir / 'sub'}" in after_cd
        assert "Last command: mkdir -p sub && cd sub && echo in-sub" in after_cd
        assert "Exit code: 0" in after_cd and "Last output (end):\nin-sub" in after_cd
        assert "Files modified this session: notes/a.txt" in after_patch
        assert "Files modified this session: notes/a.txt\n" in after_update  # listed once
        assert "Iteration: 5 of 25" in after_close
        assert (agent.workdir / "notes/a.txt").read_text() == "two\n"


def _block_in(body: dict[str, Any]) -> str:
    """The state block of an OpenAI Responses request (its ``input`` items), checked
    to be the item just before the user's prompt."""
    items = [body_text(item) for item in body.get("input", [])]
    found = [i for i, text in enumerate(items) if "<agentic_state>" in text]
    if not found:
        return ""
    (index,) = found
    assert PROMPT in items[index + 1] and '"role":"user"' in items[index + 1]
    return items[index].encode().decode("unicode_escape")


async def test_in_agentic_mode_its_iterations_replace_the_round_limit(
    start_agent: StartAgent,
) -> None:
    working = {"tool_calls": [call("shell", command="true")]}
    script = {"turns": [{"tool_calls": [ENTER]}, working], "repeat": True}
    config = SessionConfig(
        agentic_mode=True,
        agentic_max_iterations=3,
        max_tool_rounds_per_input=2,
        enable_loop_detection=False,
    )
    async with start_agent("anthropic", script, config) as agent:
        await agent.run(PROMPT)
        assert len(agent.request_bodies()) == 4  # entering, then three iterations
        assert agent.of(TurnLimitEvent) == [TurnLimitEvent("agentic_max_iterations", round=3)]
