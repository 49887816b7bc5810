"""What the providers say about retrying is honoured, over real HTTP through a gateway:
``retry-after-ms`` before ``retry-after``, ``x-should-retry``, and a Retry-After longer
than our own backoff cap waited out up to ``max_retry_after``. A keyless endpoint (a
local server) gets no credentials header at all."""

from __future__ import annotations

import pytest
import trio

from actors.kernel import Runtime
from actors.mockllm import Fault, Script, Turn, serve_mock_llm
from actors.models import ModelSession, RateLimitError, RetryPolicy, ServerError, open_gateway
from actors.models.config import Wire, endpoint
from protocol.llm import Message, Request
from tests.models.conftest import HANG_GUARD, WIRES, Connect

REQUEST = Request("m", [Message.user("hi")])


@pytest.mark.parametrize("wire", WIRES)
async def test_retry_after_ms_wins_over_retry_after(wire: str, connect: Connect) -> None:
    fault = Fault(status=429, retry_after=600, headers={"retry-after-ms": "30"})
    script = Script([Turn(fault=fault), Turn(text="after 30 ms")])
    policy = RetryPolicy(max_retries=2, base_delay=600.0, max_delay=600.0, max_retry_after=900)
    async with connect(wire, script, policy=policy) as (server, session):
        with trio.fail_after(HANG_GUARD):  # 600 s would hang past the guard
            assert (await session.complete(REQUEST)).text == "after 30 ms"
    assert len(server.requests) == 2


@pytest.mark.parametrize("wire", WIRES)
async def test_x_should_retry_false_is_not_retried(wire: str, connect: Connect) -> None:
    fault = Fault(status=503, message="do not retry", headers={"x-should-retry": "false"})
    script = Script([Turn(fault=fault), Turn(text="no")])
    async with connect(wire, script) as (server, session):
        with trio.fail_after(HANG_GUARD), pytest.raises(ServerError):
            await session.complete(REQUEST)
    assert len(server.requests) == 1


async def test_x_should_retry_true_retries_what_would_not_be(connect: Connect) -> None:
    fault = Fault(status=409, message="conflict", headers={"x-should-retry": "true"})
    script = Script([Turn(fault=fault), Turn(text="second time")])
    async with connect("openai_chat", script) as (server, session):
        with trio.fail_after(HANG_GUARD):
            assert (await session.complete(REQUEST)).text == "second time"
    assert len(server.requests) == 2


async def test_a_long_retry_after_is_waited_out_within_the_bound(connect: Connect) -> None:
    script = Script([Turn(fault=Fault(status=429, retry_after=0.2)), Turn(text="waited")])
    policy = RetryPolicy(max_retries=1, base_delay=0.001, max_delay=0.001, max_retry_after=5)
    async with connect("anthropic", script, policy=policy) as (server, session):
        with trio.fail_after(HANG_GUARD):
            assert (await session.complete(REQUEST)).text == "waited"
    assert len(server.requests) == 2


async def test_a_retry_after_beyond_the_bound_fails_at_once(connect: Connect) -> None:
    script = Script([Turn(fault=Fault(status=429, retry_after=3600)), Turn(text="never")])
    policy = RetryPolicy(max_retries=3, max_retry_after=60)
    async with connect("gemini", script, policy=policy) as (server, session):
        with trio.fail_after(HANG_GUARD), pytest.raises(RateLimitError) as caught:
            await session.complete(REQUEST)
    assert caught.value.retry_after == 3600
    assert len(server.requests) == 1


CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key")


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", ["complete", "stream"])
async def test_no_credentials_header_without_a_key(wire: Wire, mode: str) -> None:
    async with Runtime() as runtime, serve_mock_llm(Script([Turn(text="local")])) as server:
        ep = endpoint(wire, server.base_url, "")  # OPENAI_BASE_URL to a local server
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            session = await ModelSession.connect(gateway)
            with trio.fail_after(HANG_GUARD):
                if mode == "complete":
                    assert (await session.complete(REQUEST)).text == "local"
                else:
                    async with session.stream(REQUEST) as events:
                        assert [e async for e in events][-1].response.text == "local"  # type: ignore[union-attr]
    headers = server.requests[0].headers
    assert not [name for name in CREDENTIAL_HEADERS if name in headers]
