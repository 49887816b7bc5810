"""§8.10 The integration smoke test, run end to end against the mock provider.

The spec runs it with real API keys; here every call is real HTTP to ``troupe
mock-llm`` through real gateway actors, scripted with what the providers answer.
"""

from __future__ import annotations

import base64

import msgspec

from actors.models.client import Tool, generate, generate_object, get_latest_model, stream
from actors.models.errors import ModelError, NotFoundError
from protocol.llm import ImagePart, Message, TextDelta, TextPart
from tests.models.checklist.conftest import PROVIDERS, Spec
from tests.models.checklist.test_83_message_content import PNG

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


async def test_smoke(spec: Spec) -> None:
    script = {
        "conversations": [
            {"match": "Say hello", "turns": [{"text": "Hello there!", "usage": {"input": 7}}]},
            {"match": "Write a haiku", "turns": [{"text": "Code flows like water"}]},
            {
                "match": "weather in San Francisco and New York",
                "turns": [
                    {
                        "tool_calls": [
                            {"name": "get_weather", "arguments": {"city": "San Francisco"}},
                            {"name": "get_weather", "arguments": {"city": "New York"}},
                        ]
                    },
                    {"text": "San Francisco: 65F. New York: 50F."},
                ],
            },
            {"match": "What do you see", "turns": [{"text": "A single pixel."}]},
            {"match": "Extract", "turns": [{"text": '{"name": "Alice", "age": 30}'}]},
            {"match": "test", "turns": [{"fault": {"status": 404, "message": "no such model"}}]},
        ]
    }
    async with spec(script) as (server, client):
        # 1. Basic generation across all providers
        for provider in PROVIDERS:
            latest = get_latest_model(provider)
            assert latest is not None
            result = await generate(
                latest.id,
                "Say hello in one sentence.",
                max_tokens=100,
                provider=provider,
                client=client,
            )
            assert result.text
            assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
            assert result.finish_reason.reason == "stop"
        # 2. Streaming
        async with stream(
            "claude-opus-4-6", "Write a haiku.", provider="anthropic", client=client
        ) as streamed:
            chunks = [e.delta async for e in streamed if type(e) is TextDelta]
        assert "".join(chunks) == streamed.response().text
        # 3. Tool calling with parallel execution
        temps = {"San Francisco": "65F", "New York": "50F"}
        weather = Tool("get_weather", "Weather", WEATHER, lambda city: temps[city])
        result = await generate(
            "claude-opus-4-6",
            "What is the weather in San Francisco and New York?",
            tools=[weather],
            max_tool_rounds=3,
            provider="anthropic",
            client=client,
        )
        assert len(result.steps) >= 2
        assert "San Francisco" in result.text and "New York" in result.text
        # 4. Image input
        message = Message(
            "user", [TextPart("What do you see?"), ImagePart(data=PNG, media_type="image/png")]
        )
        result = await generate(
            "claude-opus-4-6", messages=[message], provider="anthropic", client=client
        )
        assert result.text
        # 5. Structured output
        schema = {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name", "age"],
        }
        result = await generate_object(
            "gpt-5.2", "Extract: Alice is 30 years old", schema=schema, client=client
        )
        assert result.output["name"] == "Alice" and result.output["age"] == 30
        # 6. Error handling
        error: ModelError | None = None
        try:
            await generate("nonexistent-model-xyz", "test", provider="openai", client=client)
        except NotFoundError as caught:
            error = caught
        assert error is not None, "Should have raised an error"
    images = [r for r in server.requests if base64.b64encode(PNG).decode().encode() in r.body]
    assert len(images) == 1
    assert msgspec.json.decode(images[0].body)["messages"][0]["content"][1]["type"] == "image"
