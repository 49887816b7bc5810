"""The cost ledger and the dollar caps, in real sessions against the scripted
provider reporting token counts (cache reads and writes included), priced by the
model catalog (claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache
write per million tokens)."""

from __future__ import annotations

from typing import Any

import pytest

from actors.session.cost_ledger import CostLedger
from protocol.events import TurnLimitEvent, WarningEvent
from protocol.llm import Usage
from protocol.session import ExtendLimit, SessionConfig, SessionOutcome, Spend, WaitIdle
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import call
from tests.session.test_subagents import conversations

MODEL = "claude-sonnet-4-5"
USAGE = {"input": 100_000, "output": 1_000, "cache_read": 50_000, "cache_write": 10_000}
CALL_COST = (100_000 * 3 + 1_000 * 15 + 50_000 * 0.30 + 10_000 * 3.75) / 1_000_000
"""$0.3675 a call; at the input price for cached tokens it would be $0.495."""


def reading(**usage: int) -> dict[str, Any]:
    turn = {"tool_calls": [call("read_file", file_path="notes.txt")], "usage": usage or USAGE}
    return {"turns": [turn], "repeat": True}


async def test_a_dollar_cap_stops_at_the_expected_round(start_agent: StartAgent) -> None:
    # $1.20: 4 calls at cache prices ($1.47 after the 4th); at the input price the
    # 3rd call would already be past it. Then extend_limit by $1: 6 calls.
    config = SessionConfig(model=MODEL, max_cost=1.2)
    async with start_agent("anthropic", reading(), config) as agent:
        (agent.workdir / "notes.txt").write_text("alpha\n")
        await agent.run("read the notes")
        outcome: SessionOutcome = await agent.ref.ask(WaitIdle())
        assert outcome.stop_reason == "turn_limit" and outcome.turns_used == 4
        assert outcome.spend is not None
        assert outcome.spend.cost_usd == pytest.approx(4 * CALL_COST)
        assert outcome.spend.cache_read_tokens == 4 * 50_000
        assert outcome.spend.cache_write_tokens == 4 * 10_000
        stop = agent.of(TurnLimitEvent)[-1]
        assert stop.limit == "max_cost" and stop.cost_usd == pytest.approx(4 * CALL_COST)
        assert "cost cap reached" in outcome.output
        near = [w for w in agent.of(WarningEvent) if w.category == "cost_cap_near"]
        assert len(near) == 1  # at 80 %: after the 3rd call ($1.10)

        config = await agent.ref.ask(ExtendLimit(1))
        assert config.max_cost == pytest.approx(2.2)
        await agent.drain_until("processing_end")
        outcome = await agent.ref.ask(WaitIdle())
        assert outcome.turns_used == 6 and outcome.stop_reason == "turn_limit"


async def test_an_input_cap_counts_only_that_input(start_agent: StartAgent) -> None:
    config = SessionConfig(model=MODEL, max_input_cost=0.5)
    async with start_agent("anthropic", reading(), config) as agent:
        (agent.workdir / "notes.txt").write_text("alpha\n")
        await agent.run("first")
        await agent.run("second")
        outcome: SessionOutcome = await agent.ref.ask(WaitIdle())
    limits = [e.limit for e in agent.of(TurnLimitEvent)]
    assert limits == ["max_input_cost", "max_input_cost"]
    assert outcome.turns_used == 4  # two calls each: $0.37, then $0.74 is past $0.50


def child(n: int) -> list[Any]:
    return [{"text": f"child {n} done", "usage": {"input": 1_000 * n, "output": 100}}]


async def test_the_ledger_of_a_parent_with_three_subagents_adds_up(
    start_agent: StartAgent,
) -> None:
    spawns = [call("spawn_agent", task=f"child-task-{n}") for n in (1, 2, 3)]
    parent = [
        {"tool_calls": spawns, "usage": USAGE},
        {"tool_calls": [call("wait", agent_ids=["a-1", "a-2", "a-3"])], "usage": USAGE},
        {"text": "all three done", "usage": USAGE},
    ]
    script = conversations(parent, **{f"child-task-{n}": child(n) for n in (1, 2, 3)})
    async with start_agent("anthropic", script, SessionConfig(model=MODEL)) as agent:
        await agent.run("PARENT: three children")
        outcome: SessionOutcome = await agent.ref.ask(WaitIdle(), timeout=HANG_GUARD)
    children = {
        f"a-{n}": Spend.of(Usage(1_000 * n, 100), (1_000 * n * 3 + 100 * 15) / 1_000_000)
        for n in (1, 2, 3)
    }
    assert set(outcome.subagent_spend) == set(children)  # which child is which: spawn order
    by_size = sorted(outcome.subagent_spend.values(), key=lambda spend: spend.input_tokens)
    for got, spend in zip(by_size, children.values(), strict=True):
        assert (got.calls, got.input_tokens, got.output_tokens) == (1, spend.input_tokens, 100)
        assert got.cost_usd == pytest.approx(spend.cost_usd)
    total = outcome.spend
    assert total is not None and total.calls == 3 + 3
    assert total.cost_usd == pytest.approx(
        3 * CALL_COST + sum(s.cost_usd for s in children.values())
    )
    assert total.input_tokens == 3 * 100_000 + 6_000


async def test_a_subagents_spend_counts_toward_its_parents_cap(start_agent: StartAgent) -> None:
    """The parent's two calls cost $0.735; its child's one call $0.3675: past $1."""
    parent = [
        {"tool_calls": [call("spawn_agent", task="child-task-1")], "usage": USAGE},
        {"tool_calls": [call("wait", agent_ids=["a-1"])], "usage": USAGE},
        {"text": "never asked", "usage": USAGE},
    ]
    script = conversations(parent, **{"child-task-1": [{"text": "spent", "usage": USAGE}]})
    async with start_agent("anthropic", script, SessionConfig(model=MODEL, max_cost=1.0)) as agent:
        await agent.run("PARENT: one child")
        outcome: SessionOutcome = await agent.ref.ask(WaitIdle(), timeout=HANG_GUARD)
    assert outcome.stop_reason == "turn_limit" and outcome.turns_used == 2
    assert outcome.spend is not None and outcome.spend.cost_usd == pytest.approx(3 * CALL_COST)


def test_a_resumed_ledger_counts_the_stored_calls() -> None:
    from protocol.session import AssistantTurn, UserTurn

    usage = Usage(100_000, 1_000, cache_read_tokens=50_000, cache_write_tokens=10_000)
    history = [UserTurn("x", 0.0), AssistantTurn("a", [], None, usage, None, 0.0)]
    ledger = CostLedger(history, MODEL)
    assert ledger.total.cost_usd == pytest.approx(CALL_COST) and ledger.total.calls == 1
    unknown = CostLedger(history, "no-such-model")
    assert unknown.total.unpriced_calls == 1 and unknown.total.cost_usd == 0


def test_a_resumed_ledger_carries_its_stored_subagents_spend() -> None:
    """The store's ledger holds a subagent's calls the history does not: a resumed
    session keeps them (under ``earlier``), so its caps still count them."""
    from protocol.session import AssistantTurn, UserTurn

    usage = Usage(100_000, 1_000, cache_read_tokens=50_000, cache_write_tokens=10_000)
    history = [UserTurn("x", 0.0), AssistantTurn("a", [], None, usage, None, 0.0)]
    ledger = CostLedger(history, MODEL)
    stored = ledger.total + Spend.of(Usage(2_000, 100), 0.0075)
    ledger.carry_over(stored)
    assert ledger.subagents["earlier"].calls == 1
    assert ledger.total.cost_usd == pytest.approx(stored.cost_usd)
    again = CostLedger(history, MODEL)
    again.carry_over(again.total)  # nothing beyond the history: nothing carried
    assert again.subagents == {}
