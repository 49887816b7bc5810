"""Provider options over the protocol: ``create_session`` with
``config.provider_options`` puts them in each model request body the scripted
provider receives; one naming a field Troupe owns is ``invalid_request``."""

from __future__ import annotations

import pytest

from protocol.client import RequestError
from protocol.session import SessionConfig
from protocol.wire import CreateSession, SubmitInput
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
