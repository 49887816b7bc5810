"""Provider options over the protocol: ``create_session`` with
``config.provider_options`` puts them in each model request body the scripted
provider receives; one naming a field Troupe owns is ``invalid_request``."""

from __future__ import annotations

import pytest

from protocol.client import RequestError
from protocol.session import SessionConfig
from protocol.wire import CreateSession, SubmitInput, UpdateSessionConfig
from tests.wire.conftest import StartStack, events_until, subscribe


async def test_create_session_options_reach_the_request_body(start_stack: StartStack) -> None:
    script = {"turns": [{"text": "ok"}], "repeat": False}
    async with start_stack(script) as stack:
        async with stack.client() as client:
            config = SessionConfig(provider_options={"service_tier": "flex", "seed": 7})
            session = (await client.request(CreateSession, config=config)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="hello")
            await events_until(client, "processing_end")
        (body,) = [request.json() for request in stack.mock.requests]
    assert (body["service_tier"], body["seed"]) == ("flex", 7)


@pytest.mark.parametrize("owned", ["model", "messages", "contents", "input", "tools", "stream"])
async def test_an_owned_field_is_invalid_request(start_stack: StartStack, owned: str) -> None:
    async with start_stack() as stack, stack.client() as client:
        config = SessionConfig(provider_options={owned: "mine"})
        with pytest.raises(RequestError) as refused:
            await client.request(CreateSession, config=config)
    assert refused.value.code == "invalid_request"
    message = refused.value.error.message
    assert f"config.provider_options: provider option {owned!r} is a field Troupe" in message
    assert not stack.mock.requests


async def test_update_config_replaces_them_and_refuses_an_owned_field(
    start_stack: StartStack,
) -> None:
    script = {"turns": [{"text": "one"}, {"text": "two"}], "repeat": False}
    async with start_stack(script) as stack, stack.client() as client:
        config = SessionConfig(provider_options={"service_tier": "flex"})
        session = (await client.request(CreateSession, config=config)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="hello")
        await events_until(client, "processing_end")
        with pytest.raises(RequestError) as refused:
            await client.request(UpdateSessionConfig, session=session,
                                 provider_options={"tools": []})  # fmt: skip
        assert refused.value.code == "invalid_request"
        updated = await client.request(UpdateSessionConfig, session=session,
                                       provider_options={"seed": 3})  # fmt: skip
        assert updated.config.provider_options == {"seed": 3}
        await client.request(SubmitInput, session=session, text="again")
        await events_until(client, "processing_end")
        first, second = [request.json() for request in stack.mock.requests]
    assert first["service_tier"] == "flex" and "seed" not in first
    assert second["seed"] == 3 and "service_tier" not in second
