"""The client layer beyond the spec's checklist: token counts from the providers' count
endpoints, the shipped middleware, catalog prices, tool definitions."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest
import trio

from actors.kernel import Runtime
from actors.mockllm import serve_mock_llm
from actors.mockllm.side_routes import mock_token_count
from actors.models.client import (
    LoggingMiddleware,
    RetryMiddleware,
    Tool,
    get_model_info,
    open_client,
    usage_cost,
)
from actors.models.client.objects import schema_type
from actors.models.config import endpoint
from actors.models.errors import ConfigurationError, ServerError
from protocol.llm import Finish, Message, Request, ToolDefinition, Usage
from tests.models.checklist.conftest import FAST, HANG_GUARD, WIRE, Spec
from tests.models.checklist.conftest import spec as spec  # the fixture

HISTORY = [
    Message.system("You are terse and exact."),
    Message.user("How many words are in this question right here?"),
    Message.assistant("Nine words."),
    Message.user("And now?"),
]
TOOL = ToolDefinition("lookup", "Look a word up", {"type": "object", "properties": {}})


@pytest.mark.parametrize(
    ("provider", "path"),
    [
        ("anthropic", "/v1/messages/count_tokens"),
        ("gemini", "/v1beta/models/m:countTokens"),
        ("openai", "/v1/responses/input_tokens"),
    ],
)
async def test_token_count_comes_from_the_provider(spec: Spec, provider: str, path: str) -> None:
    async with spec() as (server, client):
        counted = await client.count_tokens(Request("m", HISTORY, tools=[TOOL], provider=provider))
    (sent,) = server.side_requests
    assert server.requests == []  # counting is free: no model call was made
    assert sent.path == path
    body = sent.json()
    assert counted.exact and counted.source == WIRE[provider]
    assert counted.input_tokens == mock_token_count(body)  # what the server counted
    if provider == "openai":
        assert body["model"] == "m" and body["tools"][0]["name"] == "lookup"
        assert body["instructions"] == "You are terse and exact." or any(
            item.get("role") in ("system", "developer") for item in body["input"]
        )
        assert "stream" not in body and "include" not in body and "store" not in body
    elif provider == "anthropic":
        assert body["model"] == "m" and body["system"][0]["text"] == "You are terse and exact."
        assert body["tools"][0]["name"] == "lookup" and "max_tokens" not in body
    else:
        inner = body["generateContentRequest"]
        assert inner["model"] == "models/m" and len(inner["contents"]) == 3
        assert inner["systemInstruction"]["parts"][0]["text"] == "You are terse and exact."


async def test_token_count_is_an_estimate_where_no_endpoint_exists(runtime: Runtime) -> None:
    async with serve_mock_llm() as server:
        chat = {"local": endpoint("openai_chat", server.base_url, "k")}
        async with open_client(runtime, chat) as client:
            counted = await client.count_tokens(Request("m", HISTORY, provider="local"))
    assert not counted.exact and counted.source == "estimate" and counted.input_tokens > 0
    assert server.side_requests == [] and server.requests == []


async def test_logging_middleware(spec: Spec, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="troupe.models")
    script = {"turns": [{"text": "hi", "usage": {"input": 4, "output": 2}}]}
    async with spec(script, middleware=[LoggingMiddleware()]) as (_, client):
        await client.complete(Request("gpt-5.2", [Message.user("x")]))
        async with client.stream(Request("gpt-5.2", [Message.user("x")])) as events:
            [event async for event in events]
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0] == "LLM request: provider=openai model=gpt-5.2"
    assert lines[1].startswith("LLM response: tokens=6 latency=")
    assert lines[2] == "LLM stream: provider=openai model=gpt-5.2"
    assert lines[3].startswith("LLM response: tokens=6")


async def test_retry_middleware_for_complete_and_stream(spec: Spec) -> None:
    retried: list[int] = []
    middleware = RetryMiddleware(
        FAST, on_retry=lambda error, attempt, delay: retried.append(attempt)
    )
    script = {
        "turns": [
            {"fault": {"status": 500}},
            {"text": "one"},
            {"fault": {"status": 503}},
            {"text": "two"},
        ],
        "repeat": False,
    }
    async with spec(script, middleware=[middleware]) as (server, client):
        with trio.fail_after(HANG_GUARD):
            first = await client.complete(Request("gpt-5.2", [Message.user("x")]))
            async with client.stream(Request("gpt-5.2", [Message.user("x")])) as events:
                seen = [event async for event in events]
    assert first.text == "one" and type(seen[-1]) is Finish and seen[-1].response.text == "two"
    assert retried == [0, 0] and len(server.requests) == 4


async def test_retry_middleware_gives_up(spec: Spec) -> None:
    async with spec(
        {"turns": [{"fault": {"status": 500}}]}, middleware=[RetryMiddleware(FAST)]
    ) as (
        server,
        client,
    ):
        with pytest.raises(ServerError):
            await client.complete(Request("gpt-5.2", [Message.user("x")]))
    assert len(server.requests) == 3


def test_cost_at_catalog_prices() -> None:
    sonnet = get_model_info("claude-sonnet-4-5")
    gpt = get_model_info("gpt-5.2")
    assert sonnet is not None and gpt is not None
    usage = Usage(1_000_000, 1_000_000, 2_000_000, None, 1_000_000, 1_000_000)
    # Anthropic: cached tokens are counted apart from input_tokens.
    assert sonnet.cost(usage) == pytest.approx(3.0 + 15.0 + 0.3 + 3.75)
    # OpenAI: cached tokens are part of input_tokens, billed at the cached price.
    assert gpt.cost(Usage(1_000_000, 0, 0, None, 400_000)) == pytest.approx(
        0.6 * 1.75 + 0.4 * 0.175
    )
    assert usage_cost("unknown-model", usage) is None


def test_tool_names_and_schemas_are_checked_at_definition() -> None:
    with pytest.raises(ConfigurationError, match="tool name"):
        Tool("1bad name")
    with pytest.raises(ConfigurationError, match="object"):
        Tool("ok", parameters={"type": "array"})
    assert Tool("a" * 64).name


class Point(msgspec.Struct, frozen=True):
    """A point on the plane."""

    x: int
    y: int = 0


def test_tool_from_a_struct() -> None:
    tool = Tool.from_struct("point", Point)
    assert tool.description == "A point on the plane."
    assert tool.parameters["type"] == "object" and tool.parameters["required"] == ["x"]


def test_schema_types_validate_what_json_schema_says() -> None:
    kind = schema_type(
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["a", "b"]},
                "maybe": {"type": ["integer", "null"]},
            },
            "required": ["tags"],
            "additionalProperties": False,
        }
    )
    assert msgspec.convert({"tags": ["x"], "mode": "a", "maybe": None}, kind)
    for bad in ({"tags": [1]}, {"tags": [], "mode": "c"}, {"tags": [], "extra": 1}, {}):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(bad, kind)


def test_platforms_from_the_environment() -> None:
    from actors.models.endpoints import platform_endpoints_from_env

    assert platform_endpoints_from_env({}) == {}
    env = {
        "AZURE_OPENAI_API_KEY": "az",
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/",
        "OPENAI_API_VERSION": "2024-10-21",
        "OPENROUTER_API_KEY": "or",
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": "eu-west-1",
        "AWS_BEARER_TOKEN_BEDROCK": "br",
        "CLAUDE_CODE_USE_VERTEX": "1",
        "ANTHROPIC_VERTEX_PROJECT_ID": "proj",
        "CLOUD_ML_REGION": "us-east5",
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "proj",
        "GOOGLE_CLOUD_LOCATION": "global",
    }
    found = platform_endpoints_from_env(env)
    assert sorted(found) == ["azure", "bedrock", "openrouter", "vertex", "vertex-anthropic"]
    azure = found["azure"]
    assert azure.base_url == "https://res.openai.azure.com/openai"
    assert azure.platform_options["api_version"] == "2024-10-21" and azure.api_key == "az"
    assert found["bedrock"].base_url == "https://bedrock-runtime.eu-west-1.amazonaws.com"
    assert found["bedrock"].platform_options["bearer_token"] == "br"
    assert found["openrouter"].base_url == "https://openrouter.ai/api/v1"
    assert found["vertex-anthropic"].base_url == (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5"
        "/publishers/anthropic"
    )
    assert found["vertex"].base_url == (
        "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/publishers/google"
    )


def test_a_catalog_of_ones_own(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from actors.models.client.catalog import default_catalog

    own = tmp_path / "models.json"
    own.write_text(
        '{"models": [{"id": "house-model", "provider": "local", '
        '"display_name": "House", "context_window": 32768}]}'
    )
    monkeypatch.setenv("TROUPE_MODEL_CATALOG", str(own))
    catalog = default_catalog()
    assert [m.id for m in catalog.list()] == ["house-model"]
    assert catalog.get("house-model").context_window == 32768  # type: ignore[union-attr]
