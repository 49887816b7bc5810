"""Token budgets per input and per session, from the usage the model reports: a
warning to the user and the model near the budget, then a stop with a clear
message and a ``turn_limit`` event. Real sessions against ``troupe mock-llm``,
whose script sets each answer's usage."""

from __future__ import annotations

import trio

from actors.session.token_budget import budget_stop_message
from protocol.events import TurnLimitEvent, WarningEvent
from protocol.session import ExtendLimit, GetSnapshot, SessionConfig, SteeringTurn, WaitIdle
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import body_text, call

USAGE = {"input": 100, "output": 20}  # 120 tokens an answer


def budget_warnings(seen: list[WarningEvent]) -> list[str]:
    return [w.message for w in seen if w.category == "token_budget_near"]


async def test_input_budget_warns_then_stops(start_agent: StartAgent) -> None:
    turn = {"tool_calls": [call("shell", command="true")], "usage": USAGE}
    script = {"turns": [turn], "repeat": True}
    config = SessionConfig(input_token_budget=500, enable_loop_detection=False)
    async with start_agent("gemini", script, config) as agent:
        await agent.run("work")
        bodies = agent.request_bodies()
        # 120, 240, 360, 480 (past 80 %: warned), 600 (past the budget: stopped)
        assert len(bodies) == 5
        warnings = budget_warnings(agent.of(WarningEvent))
        assert len(warnings) == 1 and "480 of 500 tokens used for this request" in warnings[0]
        assert "480 of 500" not in body_text(bodies[3]) and "480 of 500" in body_text(bodies[4])
        assert agent.of(TurnLimitEvent) == [TurnLimitEvent("input_token_budget", tokens_used=600)]
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == budget_stop_message("input_token_budget", 600, 500)
        assert (
            outcome.output == "Stopped: token budget exceeded (600 of 500 tokens for this request)."
        )
        assert outcome.stop_reason == "turn_limit" and not outcome.success
        history = (await agent.ref.ask(GetSnapshot())).history
        assert (
            sum(isinstance(t, SteeringTurn) and "Token budget" in t.content for t in history) == 1
        )
        # Extending the budget continues the same input, with what it already spent.
        assert (await agent.ref.ask(ExtendLimit(200))).input_token_budget == 700
        with trio.fail_after(HANG_GUARD):
            await agent.ref.ask(WaitIdle(), timeout=None)
            await agent.drain_until("processing_end")
        assert len(agent.request_bodies()) == 6  # 720 > 700 after one more call
        assert agent.of(TurnLimitEvent)[-1] == TurnLimitEvent("input_token_budget", tokens_used=720)


async def test_each_new_input_has_a_fresh_input_budget(start_agent: StartAgent) -> None:
    script = {"turns": [{"text": "ok", "usage": USAGE}], "repeat": True}
    config = SessionConfig(input_token_budget=200)
    async with start_agent("anthropic", script, config) as agent:
        for text in ("one", "two", "three"):
            await agent.run(text)
        assert len(agent.request_bodies()) == 3
        assert agent.of(TurnLimitEvent) == []
        assert (await agent.ref.ask(WaitIdle())).output == "ok"


async def test_session_budget_stops_the_next_input_before_any_model_call(
    start_agent: StartAgent,
) -> None:
    script = {"turns": [{"text": "answer", "usage": USAGE}], "repeat": True}
    config = SessionConfig(session_token_budget=200)
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("one")
        assert budget_warnings(agent.of(WarningEvent)) == []
        await agent.run("two")  # 240 tokens: past 80 % and past the budget
        warnings = budget_warnings(agent.of(WarningEvent))
        assert len(warnings) == 1 and "240 of 200 tokens used for this session" in warnings[0]
        assert (await agent.ref.ask(WaitIdle())).output == "answer"  # that input was done
        await agent.run("three")
        assert len(agent.request_bodies()) == 2  # no model call for the third input
        limit = TurnLimitEvent("session_token_budget", tokens_used=240)
        assert agent.of(TurnLimitEvent) == [limit]
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.output == budget_stop_message("session_token_budget", 240, 200)


async def test_budgets_are_off_by_default(start_agent: StartAgent) -> None:
    script = {"turns": [{"text": "fine", "usage": {"input": 10_000_000, "output": 1}}]}
    async with start_agent("anthropic", script) as agent:
        await agent.run("one")
        await agent.run("two")
        assert agent.of(TurnLimitEvent) == []
        assert budget_warnings(agent.of(WarningEvent)) == []
