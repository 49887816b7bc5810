"""§8.6 Prompt caching.

Whether a provider actually serves from its cache cannot be shown by a mock: what is
checked is what the client controls (the requests are built so that caching works,
and the counts the provider reports are read), with the mock scripting the counts.
"""

from __future__ import annotations

import itertools

import pytest

from actors.models.client import Tool, generate
from protocol.llm import Message, Request
from tests.models.checklist.conftest import MODEL, PROVIDERS, Spec

CACHED = {
    "turns": [{"text": "ok", "usage": {"input": 1000, "cache_read": 800, "cache_write": 150}}]
}


def ask(provider: str, **fields: object) -> Request:
    messages = [Message.system("You are a coding agent."), Message.user("hi")]
    return Request(MODEL[provider], messages, provider=provider, **fields)  # type: ignore[arg-type]


async def test_openai_caching_needs_no_client_configuration(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(ask("openai"))
    text = str(server.requests[0].json())
    assert "cache_control" not in text and "prompt_cache" not in text


async def test_openai_cache_read_tokens(spec: Spec) -> None:
    async with spec(CACHED) as (_, client):
        response = await client.complete(ask("openai"))
    assert response.usage.cache_read_tokens == 800


async def test_anthropic_supports_cache_control_blocks(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(ask("anthropic"))
    assert "'cache_control': {'type': 'ephemeral'}" in str(server.requests[0].json())


async def test_anthropic_automatic_breakpoints(spec: Spec) -> None:
    tool = Tool("read", "Read a file")
    async with spec() as (server, client):
        await client.complete(
            Request(
                "claude-opus-4-6",
                [
                    Message.system("sys"),
                    Message.user("one"),
                    Message.assistant("two"),
                    Message.user("3"),
                ],
                tools=[tool.definition()],
                provider="anthropic",
            )
        )
    body = server.requests[0].json()
    ephemeral = {"type": "ephemeral"}
    assert body["system"][-1]["cache_control"] == ephemeral
    assert body["tools"][-1]["cache_control"] == ephemeral
    assert body["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert "cache_control" not in body["messages"][0]["content"][-1]


async def test_anthropic_prompt_caching_beta_header(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(ask("anthropic"))
        await client.complete(
            ask("anthropic", provider_options={"anthropic": {"auto_cache": False}})
        )
    cached, uncached = (r.headers.get("anthropic-beta", "") for r in server.requests)
    assert "prompt-caching-2024-07-31" in cached.split(",")
    assert "prompt-caching" not in uncached


async def test_anthropic_cache_read_and_write_tokens(spec: Spec) -> None:
    async with spec(CACHED) as (_, client):
        response = await client.complete(ask("anthropic"))
    assert (response.usage.cache_read_tokens, response.usage.cache_write_tokens) == (800, 150)


async def test_anthropic_automatic_caching_can_be_disabled(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(
            ask("anthropic", provider_options={"anthropic": {"auto_cache": False}})
        )
    assert "cache_control" not in str(server.requests[0].json())


async def test_gemini_prefix_caching_needs_no_client_configuration(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(ask("gemini"))
    text = str(server.requests[0].json())
    assert "cachedContent" not in text and "cache_control" not in text


async def test_gemini_cache_read_tokens(spec: Spec) -> None:
    async with spec(CACHED) as (_, client):
        response = await client.complete(ask("gemini"))
    assert response.usage.cache_read_tokens == 800


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_multi_turn_session_keeps_a_cacheable_prefix(spec: Spec, provider: str) -> None:
    """Turn 5+ can only be served from cache if every request starts with the bytes of
    the one before it; the cache counts the provider reports then reach the caller."""
    rounds = 6
    usage = {"input": 1000 + 10, "cache_read": 900}
    call = {"tool_calls": [{"name": "step", "arguments": {"round": 1}}], "usage": usage}
    script = {"turns": [call] * rounds + [{"text": "done", "usage": usage}], "repeat": False}
    tool = Tool(
        "step",
        execute=lambda round: f"round {round} done",
        parameters={"type": "object", "properties": {"round": {"type": "integer"}}},
    )
    async with spec(script) as (server, client):
        result = await generate(
            MODEL[provider],
            "work",
            system="You are a coding agent.",
            tools=[tool],
            max_tool_rounds=rounds,
            provider=provider,
            client=client,
            provider_options={"anthropic": {"auto_cache": False}},
        )
    bodies = [r.json() for r in server.requests]
    assert len(bodies) == rounds + 1
    key = {"openai": "input", "anthropic": "messages", "gemini": "contents"}[provider]
    for before, after in itertools.pairwise(bodies[4:]):
        assert after[key][: len(before[key])] == before[key]  # the earlier request is a prefix
    for step in result.steps[4:]:  # turn 5 onwards
        assert (step.usage.cache_read_tokens or 0) > step.usage.input_tokens / 2
