"""Classification of provider errors and the retry policy."""

from __future__ import annotations

import email.utils
import random
import time

import pytest

from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    ContentFilterError,
    ContextLengthError,
    InvalidRequestError,
    NetworkError,
    NotFoundError,
    ProviderError,
    QuotaExceededError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    classify,
    from_info,
)
from actors.models.retry import RetryPolicy


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, InvalidRequestError),
        (401, AuthenticationError),
        (403, AccessDeniedError),
        (404, NotFoundError),
        (408, RequestTimeoutError),
        (413, ContextLengthError),
        (422, InvalidRequestError),
        (429, RateLimitError),
        (500, ServerError),
        (503, ServerError),
        (529, ServerError),
    ],
)
def test_status_codes(status: int, cls: type) -> None:
    error = classify("openai", status, b'{"error": {"message": "boom"}}')
    assert type(error) is cls
    assert error.status_code == status
    assert error.message == "boom"


def test_provider_type_beats_status() -> None:
    body = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    assert type(classify("anthropic", 529, body)) is ServerError
    quota = b'{"error": {"message": "You exceeded your quota", "code": "insufficient_quota"}}'
    error = classify("openai", 429, quota)
    assert type(error) is QuotaExceededError and not error.retryable


def test_message_words_refine_a_400() -> None:
    long = b'{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}'
    assert type(classify("openai", 400, long)) is ContextLengthError
    safety = b'{"error": {"message": "blocked by the safety system"}}'
    assert type(classify("openai", 400, safety)) is ContentFilterError


def test_gemini_status_and_retry_info() -> None:
    body = (
        b'{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", '
        b'"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", '
        b'"retryDelay": "34.4s"}]}}'
    )
    error = classify("gemini", 429, body)
    assert type(error) is RateLimitError
    assert error.retry_after == pytest.approx(34.4)


def test_retry_after_header_seconds_and_date() -> None:
    assert classify("x", 429, b"", {"retry-after": "2"}).retry_after == 2.0
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    after = classify("x", 429, b"", {"retry-after": when}).retry_after
    assert after is not None and 25 < after <= 30


def test_body_that_is_not_json_keeps_its_text() -> None:
    error = classify("x", 502, b"<html>Bad gateway</html>")
    assert type(error) is ServerError
    assert "Bad gateway" in error.message


def test_unknown_status_defaults_to_retryable() -> None:
    error = classify("x", 418, b"{}")
    assert type(error) is ProviderError and error.retryable


def test_error_info_round_trips_to_the_same_type() -> None:
    error = classify(
        "anthropic", 401, b'{"error": {"type": "authentication_error", "message": "no"}}'
    )
    again = from_info(error.info())
    assert type(again) is AuthenticationError
    assert again.message == "no" and again.status_code == 401 and not again.retryable


def test_backoff_grows_with_jitter_within_bounds() -> None:
    policy = RetryPolicy(max_retries=5, base_delay=1.0, max_delay=60.0)
    rng = random.Random(1)
    error = ServerError("boom")
    for attempt in range(5):
        delay = policy.delay(attempt, error, rng)
        assert delay is not None
        assert 0.5 * 2**attempt <= delay <= 1.5 * 2**attempt
    assert policy.delay(5, error, rng) is None  # retries exhausted


def test_no_jitter_is_exact_and_capped() -> None:
    policy = RetryPolicy(max_retries=10, base_delay=1.0, max_delay=5.0, jitter=False)
    assert [policy.delay(n, ServerError("x")) for n in range(4)] == [1.0, 2.0, 4.0, 5.0]


def test_retry_after_is_waited_out_up_to_max_retry_after() -> None:
    policy = RetryPolicy(max_delay=10.0, max_retry_after=60.0)
    assert policy.delay(0, RateLimitError("slow down", retry_after=3.0)) == 3.0
    # longer than our own backoff cap: still waited, as the server asked
    assert policy.delay(0, RateLimitError("slow down", retry_after=45.0)) == 45.0
    assert policy.delay(0, RateLimitError("slow down", retry_after=120.0)) is None


def test_retry_after_ms_and_x_should_retry() -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "9"}
    assert classify("x", 429, b"", headers).retry_after == 1.5
    assert classify("x", 429, b"", {"retry-after-ms": "junk", "retry-after": "2"}).retry_after == 2
    refused = classify("x", 500, b"", {"x-should-retry": "false"})
    assert refused.retryable is False
    assert RetryPolicy().delay(0, refused) is None
    forced = classify("x", 400, b'{"error": {"message": "bad"}}', {"x-should-retry": "true"})
    assert forced.retryable is True
    assert RetryPolicy(jitter=False).delay(0, forced) == 1.0


def test_never_retried() -> None:
    policy = RetryPolicy(max_retries=5)
    assert policy.delay(0, AuthenticationError("no")) is None
    assert policy.delay(0, AccessDeniedError("no", retryable=True)) is None
    assert policy.delay(0, RequestTimeoutError("slow")) is None
    assert policy.delay(0, InvalidRequestError("bad")) is None
    assert policy.delay(0, NetworkError("reset")) is not None
    assert RetryPolicy(max_retries=0).delay(0, NetworkError("reset")) is None
