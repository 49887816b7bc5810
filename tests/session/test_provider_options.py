"""``SessionConfig.provider_options``: fields added to each request body on
whichever wire the session talks (coding-agent-loop-spec 2.2), real sessions
against the scripted provider over loopback HTTP, one per wire."""

from __future__ import annotations

import pytest

from actors.models.config import Wire
from protocol.events import AssistantTextEndEvent, ErrorEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns

OPTIONS = {"service_tier": "flex", "x_probe": {"nested": [1, "two", True]}}
WIRES: list[tuple[str, Wire, str | None]] = [
    ("openai", "openai_responses", None),
    ("openai", "openai_chat", None),
    ("anthropic", "anthropic", None),
    ("gemini", "gemini", None),
    ("anthropic", "bedrock_converse", "us.amazon.nova-pro-v1:0"),
]


@pytest.mark.parametrize(("profile", "wire", "model"), WIRES)
async def test_options_reach_every_request_body(
    start_agent: StartAgent, profile: str, wire: Wire, model: str | None
) -> None:
    script = turns([call("read_file", file_path="a.txt")], "Read it.")
    config = SessionConfig(model=model, provider_options=OPTIONS)
    async with start_agent(profile, script, config, wire=wire) as agent:
        (agent.workdir / "a.txt").write_text("alpha\n")
        await agent.run("read a.txt")
        assert agent.of(AssistantTextEndEvent)[-1].text == "Read it."
        bodies = agent.request_bodies()
    assert len(bodies) == 2
    for body in bodies:
        assert {key: body.get(key) for key in OPTIONS} == OPTIONS


async def test_an_option_naming_a_field_troupe_owns_is_refused(start_agent: StartAgent) -> None:
    """An embedder's config that skipped the server's check: the adapter refuses
    it with a typed error, and nothing is sent."""
    config = SessionConfig(provider_options={"messages": []})
    async with start_agent("anthropic", turns("never"), config) as agent:
        await agent.run("hello")
        (error,) = agent.of(ErrorEvent)
        assert error.error_type == "ConfigurationError"
        assert "'messages' is a field Troupe sets itself" in error.message
        assert not agent.request_bodies()
