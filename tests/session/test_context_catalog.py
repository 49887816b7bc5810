"""The session's context warning and usage cost come from the model catalog and the
provider's own token counts (unified-llm-spec §2.9)."""

from __future__ import annotations

import pytest

from actors.models.client.catalog import get_model_info
from protocol.events import AssistantTextEndEvent, WarningEvent
from tests.session.conftest import StartAgent


async def test_context_warning_uses_the_tokens_the_provider_counted(
    start_agent: StartAgent,
) -> None:
    info = get_model_info("claude-sonnet-4-5")
    assert info is not None
    near = int(info.context_window * 0.85)
    script = {
        "turns": [
            {"text": "ok", "usage": {"input": 1000, "output": 10}},
            {"text": "ok", "usage": {"input": near, "output": 10}},
        ],
        "repeat": False,
    }
    async with start_agent("anthropic", script) as agent:
        await agent.run("short question")
        assert agent.of(WarningEvent) == []
        await agent.run("another short question")  # few characters, many tokens counted
        warning = agent.of(WarningEvent)[0]
        assert warning.category == "context_usage"
        assert warning.message.startswith("Context usage at ~85%")


async def test_each_answer_reports_its_cost_at_catalog_prices(start_agent: StartAgent) -> None:
    script = {"turns": [{"text": "ok", "usage": {"input": 1_000_000, "output": 100_000}}]}
    async with start_agent("anthropic", script) as agent:
        await agent.run("hello")
        (end,) = agent.of(AssistantTextEndEvent)
        info = get_model_info("claude-sonnet-4-5")
        assert info is not None and info.input_cost_per_million is not None
        assert info.output_cost_per_million is not None
        wanted = info.input_cost_per_million + info.output_cost_per_million / 10
        assert end.cost_usd == pytest.approx(wanted)


async def test_an_unknown_model_has_no_cost(start_agent: StartAgent) -> None:
    async with start_agent("openai", {"turns": [{"text": "ok"}], "model": "local-llama"}) as agent:
        from protocol.session import UpdateConfig

        await agent.ref.ask(UpdateConfig(model="local-llama"))
        await agent.run("hello")
        (end,) = agent.of(AssistantTextEndEvent)
        assert end.cost_usd is None
