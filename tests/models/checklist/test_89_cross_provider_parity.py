"""§8.9 Cross-provider parity: every case of the matrix, for each provider."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from actors.mockllm import MockLLMServer
from actors.models.client import Client, StepFinish, Tool, generate, generate_object, stream
from actors.models.errors import AuthenticationError, ModelError, RateLimitError
from protocol.llm import ImagePart, Message, TextDelta, TextPart
from tests.models.checklist.conftest import MODEL, PROVIDERS, Spec
from tests.models.checklist.test_83_message_content import PNG, image_of

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
Case = Callable[[Spec, str], Awaitable[None]]
CASES: dict[str, Case] = {}


def case(name: str) -> Callable[[Case], Case]:
    def register(function: Case) -> Case:
        CASES[name] = function
        return function

    return register


def weather(log: list[str]) -> Tool:
    return Tool("weather", "w", CITY, lambda city: log.append(city) or f"sunny in {city}")


def calls(*cities: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "weather", "arguments": {"city": c}} for c in cities]}


async def run(
    spec: Spec, provider: str, script: dict[str, Any], **kwargs: Any
) -> tuple[MockLLMServer, Any]:
    failure: ModelError | None = None
    async with spec(script) as (server, client):
        try:
            result = await generate(MODEL[provider], provider=provider, client=client, **kwargs)
        except ModelError as error:  # raised outside the mock's nursery, not in a group
            failure = error
        else:
            return server, result
    raise failure if failure is not None else AssertionError("the mock server ate the call")


@case("simple text generation")
async def simple(spec: Spec, provider: str) -> None:
    script = {"turns": [{"text": "Hello.", "usage": {"input": 8, "output": 2}}]}
    _, result = await run(spec, provider, script, prompt="Say hello")
    assert result.text == "Hello." and result.finish_reason.reason == "stop"
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


@case("streaming text generation")
async def streaming(spec: Spec, provider: str) -> None:
    async with (
        spec({"turns": [{"text": "a streamed sentence of words"}]}) as (_, client),
        stream(MODEL[provider], "x", provider=provider, client=client) as result,
    ):
        text = "".join([e.delta async for e in result if type(e) is TextDelta])
    assert text == result.response().text == "a streamed sentence of words"


async def _image(spec: Spec, provider: str, part: ImagePart) -> dict[str, Any]:
    message = Message("user", [TextPart("what is it?"), part])
    server, _ = await run(spec, provider, {"turns": [{"text": "a dot"}]}, messages=[message])
    return image_of(provider, server.requests[0].json())


@case("image input (base64)")
async def image_base64(spec: Spec, provider: str) -> None:
    block = await _image(spec, provider, ImagePart(data=PNG, media_type="image/png"))
    assert base64.b64encode(PNG).decode() in str(block)


@case("image input (URL)")
async def image_url(spec: Spec, provider: str) -> None:
    block = await _image(spec, provider, ImagePart(url="https://example.com/a.png"))
    assert "https://example.com/a.png" in str(block)


@case("single tool call + execution")
async def single_tool(spec: Spec, provider: str) -> None:
    log: list[str] = []
    script = {"turns": [calls("Rome"), {"text": "Sunny in Rome."}], "repeat": False}
    _, result = await run(spec, provider, script, prompt="w?", tools=[weather(log)])
    assert log == ["Rome"] and result.text == "Sunny in Rome."


@case("multiple parallel tool calls")
async def parallel_tools(spec: Spec, provider: str) -> None:
    log: list[str] = []
    script = {"turns": [calls("San Francisco", "New York"), {"text": "both"}], "repeat": False}
    server, result = await run(spec, provider, script, prompt="w?", tools=[weather(log)])
    assert sorted(log) == ["New York", "San Francisco"] and len(server.requests) == 2
    assert [r.content for r in result.steps[0].tool_results] == [
        "sunny in San Francisco",
        "sunny in New York",
    ]


@case("multi-step tool loop (3+ rounds)")
async def multi_step(spec: Spec, provider: str) -> None:
    log: list[str] = []
    script = {"turns": [calls("A"), calls("B"), calls("C"), {"text": "done"}], "repeat": False}
    _, result = await run(
        spec, provider, script, prompt="w?", tools=[weather(log)], max_tool_rounds=5
    )
    assert log == ["A", "B", "C"] and len(result.steps) == 4 and result.text == "done"


@case("streaming with tool calls")
async def streaming_tools(spec: Spec, provider: str) -> None:
    log: list[str] = []
    script = {"turns": [calls("Oslo"), {"text": "cold"}], "repeat": False}
    async with (
        spec(script) as (_, client),
        stream(
            MODEL[provider], "w?", tools=[weather(log)], provider=provider, client=client
        ) as result,
    ):
        seen = [event async for event in result]
    finishes = [e for e in seen if type(e) is StepFinish]
    assert len(finishes) == 1 and finishes[0].step.tool_results[0].content == "sunny in Oslo"
    assert result.response().text == "cold" and log == ["Oslo"]
    assert result.result is not None and len(result.result.steps) == 2


@case("structured output (generate_object)")
async def structured(spec: Spec, provider: str) -> None:
    answer = {"name": "Alice", "age": 30}
    if provider == "anthropic":
        turn: dict[str, Any] = {"tool_calls": [{"name": "json_output", "arguments": answer}]}
    else:
        turn = {"text": msgspec.json.encode(answer).decode()}
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    }
    async with spec({"turns": [turn]}) as (_, client):
        result = await generate_object(
            MODEL[provider], "Alice is 30", schema=schema, provider=provider, client=client
        )
    assert result.output == answer


@case("reasoning/thinking token reporting")
async def reasoning(spec: Spec, provider: str) -> None:
    script = {"turns": [{"reasoning": "thinking hard", "text": "42", "usage": {"reasoning": 7}}]}
    _, result = await run(spec, provider, script, prompt="q", reasoning_effort="high")
    assert result.usage.reasoning_tokens is not None and result.usage.reasoning_tokens > 0


@case("error handling (invalid API key -> 401)")
async def unauthorized(spec: Spec, provider: str) -> None:
    with pytest.raises(AuthenticationError):
        await run(spec, provider, {"turns": [{"fault": {"status": 401}}]}, prompt="x")


@case("error handling (rate limit -> 429)")
async def rate_limited(spec: Spec, provider: str) -> None:
    script = {"turns": [{"fault": {"status": 429}}]}
    with pytest.raises(RateLimitError):
        await run(spec, provider, script, prompt="x", max_retries=0)


@case("usage token counts are accurate")
async def usage(spec: Spec, provider: str) -> None:
    script = {"turns": [{"text": "x", "usage": {"input": 123, "output": 45}}]}
    _, result = await run(spec, provider, script, prompt="x")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (123, 45)
    assert result.usage.total_tokens == 168


@case("prompt caching (cache_read_tokens > 0 on turn 2+)")
async def caching(spec: Spec, provider: str) -> None:
    script = {
        "turns": [
            {**calls("A"), "usage": {"input": 500, "cache_read": 0}},
            {"text": "done", "usage": {"input": 600, "cache_read": 480}},
        ],
        "repeat": False,
    }
    _, result = await run(spec, provider, script, prompt="x", tools=[weather([])])
    assert [s.usage.cache_read_tokens for s in result.steps] == [0, 480]


@case("provider-specific options pass through")
async def options(spec: Spec, provider: str) -> None:
    opts = {"openai": {"user": "u-1"}, "anthropic": {"top_k": 3}, "gemini": {"labels": {"a": "b"}}}
    server, _ = await run(spec, provider, {}, prompt="x", provider_options=opts)
    body = server.requests[0].json()
    for key, value in opts[provider].items():
        assert body[key] == value


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(CASES))
async def test_parity(spec: Spec, provider: str, name: str) -> None:
    await CASES[name](spec, provider)


def test_the_matrix_has_every_row() -> None:
    assert len(CASES) == 15
    assert isinstance(Client, type)
