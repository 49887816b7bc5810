"""The other seeds' loop options on the one session (forge-agent-loop-prd FR5-FR7,
agent-loop-and-tool-system S5.7): loop-breaking tools, the iteration-limit warning
and terminal message, repeated-error escalation. Real sessions against
``troupe mock-llm`` over loopback HTTP."""

from __future__ import annotations

import pytest
import trio

from actors.session.loop import NothingToExtend
from actors.session.round_checks import ITERATION_LIMIT_MESSAGE
from protocol.events import ToolCallEndEvent, TurnLimitEvent, WarningEvent
from protocol.session import ExtendLimit, GetSnapshot, SessionConfig, SteeringTurn, WaitIdle
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import body_text, call, tool_names, turns

BREAKERS = SessionConfig(loop_breaking_tools=True)


@pytest.mark.parametrize(
    ("tool", "argument", "state"),
    [
        ("task_completion", "summary", "idle"),
        ("converse", "message", "idle"),
        ("ask_question", "question", "awaiting_input"),
    ],
)
async def test_each_loop_breaking_tool_stops_the_loop_at_once(
    start_agent: StartAgent, tool: str, argument: str, state: str
) -> None:
    script = turns([call(tool, **{argument: f"content of {tool}"})], "never asked for")
    async with start_agent("anthropic", script, BREAKERS) as agent:
        await agent.run("do it")
        assert len(agent.request_bodies()) == 1
        assert {"task_completion", "ask_question", "converse"} <= tool_names(
            agent.request_bodies()[0]
        )
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == f"content of {tool}"
        assert outcome.state == state
        assert (await agent.ref.ask(GetSnapshot())).state == state


async def test_the_next_input_answers_ask_question(start_agent: StartAgent) -> None:
    script = turns([call("ask_question", question="Which branch?")], "Using main.")
    async with start_agent("openai", script, BREAKERS) as agent:
        await agent.run("deploy")
        assert (await agent.ref.ask(GetSnapshot())).state == "awaiting_input"
        await agent.run("the main branch")
        second = body_text(agent.request_bodies()[1])
        assert "Which branch?" in second and "the main branch" in second
        assert (await agent.ref.ask(WaitIdle())).output == "Using main."


async def test_loop_breaking_tools_are_off_by_default(start_agent: StartAgent) -> None:
    async with start_agent("gemini", turns("hello")) as agent:
        await agent.run("hi")
        assert not {"task_completion", "ask_question", "converse"} & tool_names(
            agent.request_bodies()[0]
        )


async def test_limit_warning_then_the_terminal_message(start_agent: StartAgent) -> None:
    script = {"turns": [{"tool_calls": [call("shell", command="true")]}], "repeat": True}
    config = SessionConfig(
        max_tool_rounds_per_input=5, iteration_warning_ratio=0.8, enable_loop_detection=False
    )
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("keep going")
        warnings = [w for w in agent.of(WarningEvent) if w.category == "iteration_limit_near"]
        assert len(warnings) == 1 and "4 of 5" in warnings[0].message
        bodies = agent.request_bodies()
        assert len(bodies) == 5
        # The warning reaches the model on the request after the fourth round.
        assert "4 of 5" not in body_text(bodies[3]) and "4 of 5" in body_text(bodies[4])
        assert agent.of(TurnLimitEvent) == [TurnLimitEvent("max_tool_rounds_per_input", round=5)]
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == ITERATION_LIMIT_MESSAGE
        assert outcome.stop_reason == "turn_limit"


async def test_repeated_errors_warn_then_escalate_to_the_user(start_agent: StartAgent) -> None:
    failing = [call("read_file", file_path="missing.txt")]
    script = {"turns": [{"tool_calls": failing}], "repeat": True}
    config = SessionConfig(
        repeated_error_warn_after=2, repeated_error_escalate_after=4, enable_loop_detection=False
    )
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("read it")
        assert [e.is_error for e in agent.of(ToolCallEndEvent)] == [True] * 4
        assert len(agent.request_bodies()) == 4
        notes = [w for w in agent.of(WarningEvent) if w.category == "repeated_error"]
        assert [("2 times" in w.message, "3 times" in w.message) for w in notes] == [
            (True, False),
            (False, True),
        ]
        snapshot = await agent.ref.ask(GetSnapshot())
        steering = [t.content for t in snapshot.history if isinstance(t, SteeringTurn)]
        assert len(steering) == 2 and "change your approach" in steering[0]
        assert snapshot.state == "awaiting_input"
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output.startswith("Stopped: the same read_file call failed 4 times")


async def test_extend_limit_continues_where_the_input_stopped(start_agent: StartAgent) -> None:
    script = turns(
        [call("shell", command="echo one")], [call("shell", command="echo two")], "Finished."
    )
    config = SessionConfig(max_tool_rounds_per_input=1)
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("count")
        assert (await agent.ref.ask(WaitIdle())).output == ITERATION_LIMIT_MESSAGE
        with pytest.raises(NothingToExtend):
            await agent.ref.ask(ExtendLimit(0))
        start = len(agent.seen)
        assert (await agent.ref.ask(ExtendLimit(2))).max_tool_rounds_per_input == 3
        with trio.fail_after(HANG_GUARD):
            await agent.ref.ask(WaitIdle(), timeout=None)
            await agent.drain_until("processing_end")
        kinds = [e.kind for e in agent.seen[start:]]
        assert "user_input" not in kinds and kinds.count("tool_call_end") == 1
        outcome = await agent.ref.ask(WaitIdle())
        assert (outcome.output, outcome.stop_reason) == ("Finished.", "completed")
        history = (await agent.ref.ask(GetSnapshot())).history
        assert [type(t).__name__ for t in history].count("UserTurn") == 1
        with pytest.raises(NothingToExtend):
            await agent.ref.ask(ExtendLimit(1))
