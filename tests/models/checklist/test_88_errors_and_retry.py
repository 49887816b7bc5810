"""§8.8 Error handling and retry."""

from __future__ import annotations

import random

import pytest
import trio

from actors.models.client import Tool, generate, stream
from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    NetworkError,
    NotFoundError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    StreamError,
    classify,
)
from actors.models.retry import RetryPolicy
from protocol.llm import StreamFailed, TextDelta
from tests.models.checklist.conftest import FAST, HANG_GUARD, Spec

TABLE = [
    (400, InvalidRequestError, False),
    (401, AuthenticationError, False),
    (403, AccessDeniedError, False),
    (404, NotFoundError, False),
    (408, RequestTimeoutError, False),
    (413, ContextLengthError, False),
    (422, InvalidRequestError, False),
    (429, RateLimitError, True),
    (500, ServerError, True),
    (502, ServerError, True),
    (504, ServerError, True),
    (529, ServerError, True),
]


@pytest.mark.parametrize(("status", "error_type", "retryable"), TABLE)
async def test_status_codes_raise_the_right_error(
    spec: Spec, status: int, error_type: type, retryable: bool
) -> None:
    async with spec({"turns": [{"fault": {"status": status}}]}) as (_, client):
        with pytest.raises(error_type) as caught:
            await generate("gpt-5.2", "x", max_retries=0, client=client)
    assert caught.value.status_code == status
    assert caught.value.retryable is retryable


def test_retryable_flags() -> None:
    assert NetworkError("x").retryable and StreamError("x").retryable
    assert not RequestTimeoutError("x").retryable
    unknown = classify("openai", 418, b'{"error": {"message": "teapot"}}')
    assert unknown.retryable  # unknown errors default to retryable


def test_exponential_backoff_with_jitter() -> None:
    policy = RetryPolicy(max_retries=5, base_delay=1.0, backoff_multiplier=2.0, max_delay=60.0)
    error = ServerError("x")
    rng = random.Random(7)
    for attempt, base in enumerate([1.0, 2.0, 4.0, 8.0, 16.0]):
        samples = [policy.delay(attempt, error, rng) for _ in range(200)]
        delays = [s for s in samples if s is not None]
        assert len(delays) == len(samples)
        assert all(base * 0.5 <= s <= base * 1.5 for s in delays)
        assert max(delays) - min(delays) > base * 0.5  # jittered, not constant
    plain = RetryPolicy(max_retries=10, jitter=False, max_delay=10.0)
    assert [plain.delay(n, error) for n in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_retry_after_overrides_backoff_within_max_delay() -> None:
    policy = RetryPolicy(max_retries=3, max_delay=60.0, max_retry_after=120.0)
    assert policy.delay(0, RateLimitError("x", retry_after=12.5)) == 12.5
    # A long Retry-After is waited out up to max_retry_after (issue 21), then raised.
    assert policy.delay(0, RateLimitError("x", retry_after=90.0)) == 90.0
    assert policy.delay(0, RateLimitError("x", retry_after=300.0)) is None


async def test_max_retries_zero_disables_retries(spec: Spec) -> None:
    async with spec({"turns": [{"fault": {"status": 500}}, {"text": "ok"}]}) as (server, client):
        with pytest.raises(ServerError):
            await generate("gpt-5.2", "x", max_retries=0, client=client)
    assert len(server.requests) == 1


async def test_rate_limits_are_retried_transparently(spec: Spec) -> None:
    script = {"turns": [{"fault": {"status": 429, "retry_after": 0.05}}, {"text": "ok"}]}
    async with spec(script) as (server, client):
        with trio.fail_after(HANG_GUARD):
            result = await generate("gpt-5.2", "x", client=client)
    assert result.text == "ok" and len(server.requests) == 2


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_non_retryable_errors_raise_at_once(spec: Spec, status: int) -> None:
    async with spec({"turns": [{"fault": {"status": status}}, {"text": "ok"}]}) as (server, client):
        with pytest.raises((AuthenticationError, AccessDeniedError, NotFoundError)):
            await generate("gpt-5.2", "x", max_retries=5, retry_policy=FAST, client=client)
    assert len(server.requests) == 1


async def test_retries_apply_per_step(spec: Spec) -> None:
    log: list[str] = []
    tool = Tool("noop", execute=lambda: log.append("ran") or "done")
    script = {
        "turns": [
            {"tool_calls": [{"name": "noop"}]},
            {"fault": {"status": 503}},
            {"text": "finished"},
        ],
        "repeat": False,
    }
    async with spec(script) as (server, client):
        result = await generate("gpt-5.2", "x", tools=[tool], retry_policy=FAST, client=client)
    assert result.text == "finished"
    assert log == ["ran"]  # step 1 was not repeated when step 2 was retried
    assert len(server.requests) == 3 and len(result.steps) == 2


async def test_streaming_does_not_retry_after_partial_data(spec: Spec) -> None:
    script = {"turns": [{"text": "partial answer " * 10, "fault": {"error_after": 8}}]}
    async with (
        spec(script) as (server, client),
        stream("gpt-5.2", "x", retry_policy=FAST, client=client) as result,
    ):
        seen = [event async for event in result]
    assert any(type(e) is TextDelta for e in seen)
    assert type(seen[-1]) is StreamFailed
    assert len(server.requests) == 1


async def test_streaming_retries_before_the_first_event(spec: Spec) -> None:
    script = {"turns": [{"fault": {"status": 500}}, {"text": "second try"}], "repeat": False}
    async with (
        spec(script) as (server, client),
        stream("gpt-5.2", "x", retry_policy=FAST, client=client) as result,
    ):
        [event async for event in result]
    assert result.response().text == "second try" and len(server.requests) == 2
