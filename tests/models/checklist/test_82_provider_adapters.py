"""§8.2 Provider adapters, for each of OpenAI, Anthropic and Gemini."""

from __future__ import annotations

from typing import Any

import pytest

from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
    ServerError,
)
from protocol.llm import (
    Finish,
    Message,
    Request,
    StreamStart,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCall,
)
from tests.models.checklist.conftest import KEY, MODEL, PROVIDERS, Spec

NATIVE_PATH = {
    "openai": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-3-flash-preview:generateContent",
}
AUTH_HEADER = {
    "openai": ("authorization", f"Bearer {KEY['openai']}"),
    "anthropic": ("x-api-key", KEY["anthropic"]),
    "gemini": ("x-goog-api-key", KEY["gemini"]),
}


def ask(provider: str, *messages: Message, **fields: Any) -> Request:
    return Request(
        MODEL[provider], list(messages) or [Message.user("hi")], provider=provider, **fields
    )


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_native_api(spec: Spec, provider: str) -> None:
    async with spec() as (server, client):
        await client.complete(ask(provider))
    assert server.requests[0].path == NATIVE_PATH[provider]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_authentication_with_the_key(spec: Spec, provider: str) -> None:
    async with spec() as (server, client):
        await client.complete(ask(provider))
    name, value = AUTH_HEADER[provider]
    assert server.requests[0].headers[name] == value


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_complete_returns_a_populated_response(spec: Spec, provider: str) -> None:
    script = {"turns": [{"text": "Hello there.", "usage": {"input": 12, "output": 3}}]}
    async with spec(script) as (_, client):
        response = await client.complete(ask(provider))
    assert response.text == "Hello there."
    assert response.provider == provider and response.id and response.model
    assert response.finish_reason.reason == "stop" and response.finish_reason.raw
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)
    assert response.usage.total_tokens == 15


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stream_yields_typed_events(spec: Spec, provider: str) -> None:
    async with (
        spec({"turns": [{"text": "streamed words"}]}) as (_, client),
        client.stream(ask(provider)) as events,
    ):
        seen = [event async for event in events]
    kinds = [type(e) for e in seen]
    assert kinds[0] is StreamStart and kinds[-1] is Finish
    assert TextStart in kinds and TextDelta in kinds and TextEnd in kinds


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_system_messages_per_provider_convention(spec: Spec, provider: str) -> None:
    async with spec() as (server, client):
        await client.complete(ask(provider, Message.system("Be brief."), Message.user("hi")))
    body = server.requests[0].json()
    if provider == "openai":
        assert body["instructions"] == "Be brief."
    elif provider == "anthropic":
        assert body["system"][0]["text"] == "Be brief."
        assert all(m["role"] != "system" for m in body["messages"])
    else:
        assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_all_five_roles(spec: Spec, provider: str) -> None:
    history = [
        Message.system("sys"),
        Message.developer("dev"),
        Message.user("question"),
        Message("assistant", [ToolCall("call_1", "lookup", {"q": 1})]),
        Message.tool_result("call_1", "found", name="lookup"),
    ]
    async with spec() as (server, client):
        await client.complete(ask(provider, *history))
    body = server.requests[0].json()
    text = str(body)
    assert "sys" in text and "dev" in text and "question" in text and "found" in text
    if provider == "openai":
        kinds = [(i.get("type"), i.get("role")) for i in body["input"]]
        assert ("message", "developer") in kinds and ("message", "user") in kinds
        assert ("function_call", None) in kinds and ("function_call_output", None) in kinds
    elif provider == "anthropic":
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        assert body["messages"][1]["content"][0]["type"] == "tool_use"
        assert body["messages"][2]["content"][0]["type"] == "tool_result"
        assert [b["text"] for b in body["system"]] == ["sys", "dev"]
    else:
        assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
        assert "functionCall" in body["contents"][1]["parts"][0]
        assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == "lookup"
        assert [p["text"] for p in body["systemInstruction"]["parts"]] == ["sys", "dev"]


OPTIONS = {
    "openai": {"openai": {"store": False, "service_tier": "flex"}},
    "anthropic": {"anthropic": {"top_k": 5}},
    "gemini": {"gemini": {"safetySettings": [{"category": "X", "threshold": "BLOCK_NONE"}]}},
}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_provider_options_escape_hatch(spec: Spec, provider: str) -> None:
    async with spec() as (server, client):
        await client.complete(ask(provider, provider_options=OPTIONS[provider]))
    body = server.requests[0].json()
    for key, value in OPTIONS[provider][provider].items():
        assert body[key] == value


BETAS = {"anthropic": {"beta_headers": ["interleaved-thinking-2025-05-14", "other-1"]}}


async def test_beta_headers(spec: Spec) -> None:
    async with spec() as (server, client):
        await client.complete(ask("anthropic", provider_options=BETAS))
    sent = server.requests[0].headers["anthropic-beta"].split(",")
    # the caller's, in order, then the prompt caching one the adapter adds itself
    assert sent == ["interleaved-thinking-2025-05-14", "other-1", "prompt-caching-2024-07-31"]


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "anthropic"])
async def test_another_providers_options_stay_out_of_the_request(spec: Spec, provider: str) -> None:
    """Beta headers are Anthropic's (OpenAI and Gemini gate features in the body):
    options keyed to another provider reach neither the headers nor the body."""
    async with spec() as (server, client):
        await client.complete(ask(provider, provider_options=BETAS))
    request = server.requests[0]
    assert "anthropic-beta" not in request.headers
    assert b"beta_headers" not in request.body and b"interleaved-thinking" not in request.body


STATUS_ERRORS = [
    (400, InvalidRequestError),
    (401, AuthenticationError),
    (403, AccessDeniedError),
    (404, NotFoundError),
    (429, RateLimitError),
    (500, ServerError),
    (503, ServerError),
]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("status", "error_type"), STATUS_ERRORS)
async def test_http_errors_map_to_the_hierarchy(
    spec: Spec, provider: str, status: int, error_type: type
) -> None:
    script = {"turns": [{"fault": {"status": status, "message": "scripted failure"}}]}
    async with spec(script) as (_, client):
        with pytest.raises(error_type) as caught:
            await client.complete(ask(provider))
    assert caught.value.status_code == status
    assert caught.value.provider == provider


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_retry_after_is_parsed_onto_the_error(spec: Spec, provider: str) -> None:
    async with spec({"turns": [{"fault": {"status": 429, "retry_after": 7}}]}) as (_, client):
        with pytest.raises(RateLimitError) as caught:
            await client.complete(ask(provider))
    assert caught.value.retry_after == pytest.approx(7)
