"""What the page's session list and new-session form read over the protocol (any
client can): the server's options, and each session's working directory and cost."""

from __future__ import annotations

from pathlib import Path

from actors.models.client.catalog import list_models
from actors.policy.presets import POLICY_PRESETS
from actors.session.profiles import PROFILES
from protocol.wire import (
    CreateSession,
    GetServerOptions,
    ListSessions,
    ServerOptions,
    SessionInfo,
    SubmitInput,
)
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe
from tests.wire.conftest import start_stack as start_stack  # the fixture


async def test_server_options_name_what_the_server_accepts(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        options = await client.request(GetServerOptions)
        assert isinstance(options, ServerOptions)
        assert options.profiles == sorted(PROFILES)
        assert options.default_profile == stack.server.config.models.profile
        assert options.profile_models == {name: make().model for name, make in PROFILES.items()}
        assert options.policies == list(POLICY_PRESETS)
        assert options.default_policy in options.policies
        assert [model.id for model in options.models] == [m.id for m in list_models()]
        priced = {m.id: m for m in list_models()}
        for model in options.models:
            assert model.input_cost_per_million == priced[model.id].input_cost_per_million
        assert "high" in options.reasoning_efforts
        # Every choice offered is one the server takes.
        for profile in options.profiles:
            for policy in options.policies:
                config = {"policy": policy, "reasoning_effort": options.reasoning_efforts[0]}
                created = await client.request(CreateSession, profile=profile, config=config)
                assert created.session.profile == profile


async def test_the_list_carries_working_directory_and_cost(
    start_stack: StartStack, tmp_path: Path
) -> None:
    async with start_stack(shell_turns("echo one")) as stack, stack.client() as client:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        created = await client.request(CreateSession, working_dir=str(elsewhere))
        session = created.session.session_id
        assert created.session.working_dir == str(elsewhere)
        assert created.session.cost_usd == 0.0
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="go")
        events = await events_until(client, "processing_end")
        ends = [event.data for event in events if event.kind == "assistant_text_end"]
        assert len(ends) >= 2
        costs = [end["cost_usd"] for end in ends]
        listed = await client.request(ListSessions)
        info: SessionInfo = next(s for s in listed.sessions if s.session_id == session)
        assert info.working_dir == str(elsewhere)
        assert info.input_tokens == sum(end["usage"]["input_tokens"] for end in ends)
        # The server's default model is in the catalog, so every call has a price.
        assert all(cost is not None and cost > 0 for cost in costs), costs
        assert info.cost_usd is not None
        assert abs(info.cost_usd - sum(costs)) < 1e-12
