"""Loop presets: each document's defaults, by name, in the Python API, over
create_session, and what a session started with one actually does."""

from __future__ import annotations

import pytest

from actors.session.presets import LOOP_PRESETS, UnknownLoopPreset, preset_config
from actors.session.round_checks import ITERATION_LIMIT_MESSAGE
from protocol.events import TurnLimitEvent
from protocol.session import SessionConfig, WaitIdle
from tests.session.conftest import StartAgent
from tests.session.scripts import call, tool_names

EXPECTED = {
    # name: (iteration limit per input, default command timeout s, max timeout s)
    "coding-agent-loop": (0, 10, 600),
    "agent-loop-and-tool-system": (20, 120, 600),
    "agentic-behavior-tool": (25, 60, 300),
    "forge-agent-loop-prd": (25, 10, 600),
    "adr-040": (10, 10, 600),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_preset_sets_its_documents_defaults(name: str) -> None:
    config = preset_config(name)
    limit, timeout_s, max_s = EXPECTED[name]
    assert config.max_tool_rounds_per_input == limit
    assert config.default_command_timeout_ms == timeout_s * 1000
    assert config.max_command_timeout_ms == max_s * 1000
    assert config.loop_breaking_tools == (name == "forge-agent-loop-prd")
    assert config.agentic_mode == (name == "agentic-behavior-tool")
    assert config.agentic_max_iterations == 25


def test_explicit_settings_win_over_the_preset() -> None:
    config = preset_config("adr-040", SessionConfig(max_tool_rounds_per_input=3, model="m"))
    assert (config.max_tool_rounds_per_input, config.model) == (3, "m")
    assert config.iteration_warning_ratio == 0.8
    assert set(LOOP_PRESETS) == set(EXPECTED)
    with pytest.raises(UnknownLoopPreset, match="known: coding-agent-loop"):
        preset_config("nope")


async def test_a_session_started_with_a_preset_follows_it(start_agent: StartAgent) -> None:
    script = {"turns": [{"tool_calls": [call("shell", command="true")]}], "repeat": True}
    config = preset_config("adr-040", SessionConfig(enable_loop_detection=False))
    async with start_agent("openai", script, config) as agent:
        await agent.run("loop")
        assert agent.of(TurnLimitEvent) == [TurnLimitEvent("max_tool_rounds_per_input", round=10)]
        assert (await agent.ref.ask(WaitIdle())).output == ITERATION_LIMIT_MESSAGE
    forge = preset_config("forge-agent-loop-prd")
    async with start_agent("gemini", {"turns": [{"text": "hi"}]}, forge) as agent:
        await agent.run("hello")
        assert "task_completion" in tool_names(agent.request_bodies()[0])
    agentic = preset_config("agentic-behavior-tool")
    async with start_agent("anthropic", {"turns": [{"text": "hi"}]}, agentic) as agent:
        await agent.run("hello")
        offered = tool_names(agent.request_bodies()[0])
        assert {"terminal", "enter_agentic_mode", "complete"} <= offered
        assert "task_completion" not in offered
