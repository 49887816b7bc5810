"""§8.5 Reasoning tokens."""

from __future__ import annotations

import pytest

from protocol.llm import Finish, Message, Request, ThinkingPart
from tests.models.checklist.conftest import MODEL, PROVIDERS, Spec

THINKING = {
    "turns": [
        {
            "reasoning": "First, consider the sum.",
            "signature": "sig-xyz",
            "text": "4",
            "usage": {"input": 20, "output": 60, "reasoning": 50},
        }
    ]
}


def ask(provider: str, **fields: object) -> Request:
    return Request(MODEL[provider], [Message.user("2+2?")], provider=provider, **fields)  # type: ignore[arg-type]


async def test_openai_reasoning_tokens_via_the_responses_api(spec: Spec) -> None:
    async with spec(THINKING) as (server, client):
        response = await client.complete(ask("openai"))
    assert server.requests[0].path.endswith("/responses")
    assert response.usage.reasoning_tokens == 50


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
async def test_reasoning_effort_passed_to_openai(spec: Spec, effort: str) -> None:
    async with spec() as (server, client):
        await client.complete(ask("openai", reasoning_effort=effort))
    assert server.requests[0].json()["reasoning"]["effort"] == effort


async def test_reasoning_effort_omitted_when_none(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(ask("openai"))
    assert "reasoning" not in server.requests[0].json()


async def test_anthropic_thinking_blocks_are_thinking_parts(spec: Spec) -> None:
    async with (
        spec(THINKING) as (server, client),
        client.stream(ask("anthropic", reasoning_effort="high")) as events,
    ):
        seen = [e async for e in events]
    final = seen[-1]
    assert isinstance(final, Finish)
    response = final.response
    (part,) = [p for p in response.message.content if type(p) is ThinkingPart]
    assert part.text == "First, consider the sum."
    assert response.reasoning == "First, consider the sum."
    assert server.requests[0].json()["thinking"]["type"] == "enabled"


async def test_thinking_signature_is_preserved(spec: Spec) -> None:
    async with spec(THINKING) as (_, client):
        response = await client.complete(ask("anthropic"))
    (part,) = [p for p in response.message.content if type(p) is ThinkingPart]
    assert part.signature == "sig-xyz"
    assert part.provider == "anthropic"


async def test_gemini_thoughts_token_count_is_reasoning_tokens(spec: Spec) -> None:
    async with spec(THINKING) as (_, client):
        response = await client.complete(ask("gemini"))
    assert response.usage.reasoning_tokens == 50


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_reasoning_tokens_distinct_from_output_tokens(spec: Spec, provider: str) -> None:
    async with spec(THINKING) as (_, client):
        response = await client.complete(ask(provider))
    usage = response.usage
    assert usage.output_tokens == 60
    assert usage.reasoning_tokens is not None and usage.reasoning_tokens != usage.output_tokens
    if provider == "anthropic":
        # Anthropic gives no exact count: estimated from the thinking text (§3.9).
        assert usage.reasoning_tokens == len("First, consider the sum.") // 4
    else:
        assert usage.reasoning_tokens == 50
