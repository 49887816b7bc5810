"""A few recordings checked against values read off them by hand (not by the oracle),
including the round trip of their signatures into the next request."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio

from actors.mockllm import load_replies, serve_mock_llm
from actors.models import RetryPolicy
from actors.models.config import Wire, endpoint
from actors.models.registry import adapter_for
from protocol.llm import Finish, Message, RedactedThinkingPart, Request, Response, ThinkingPart
from tests.models.conftest import HANG_GUARD, SHARED, Connect

NO_RETRY = RetryPolicy(max_retries=0)
CASSETTES = "pydantic-ai/tests/models/cassettes"
REQUEST = Request("recorded", [Message.user("hello")])


async def replay(connect: Connect, wire: str, relative: str) -> list[Response]:
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent")
    replies = load_replies(path)
    out = []
    async with serve_mock_llm(replies=replies) as server:
        for _ in replies:
            async with connect(wire, server=server, policy=NO_RETRY) as (_, session):
                with trio.fail_after(HANG_GUARD):
                    async with session.stream(REQUEST) as events:
                        last = [event async for event in events][-1]
            assert type(last) is Finish, last
            out.append(last.response)
    return out


def built(wire: Wire, request: Request) -> dict[str, Any]:
    """The JSON body the adapter would send for ``request``."""
    call = adapter_for(endpoint(wire, "http://h")).build(request, stream=True)
    return msgspec.json.decode(call.body)


def calls(response: Response) -> list[tuple[str, str, Any]]:
    return [(c.id, c.name, c.arguments) for c in response.tool_calls]


async def test_anthropic_sdk_tool_use(connect: Connect) -> None:
    [r] = await replay(connect, "anthropic", "anthropic-sdk-python/tool_use_response.txt")
    assert r.text == "I'll check the current weather in Paris for you."
    assert calls(r) == [("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})]
    assert r.tool_calls[0].raw_arguments == '{"location": "Paris"}'
    assert r.finish_reason.reason == "tool_calls" and r.finish_reason.raw == "tool_use"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (377, 65)


async def test_openai_sdk_parallel_tool_calls(connect: Connect) -> None:
    name = "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin"
    [r] = await replay(connect, "openai_chat", f"openai-python/{name}")
    assert calls(r) == [
        (
            "call_JMW1whyEaYG438VE1OIflxA2",
            "GetWeatherArgs",
            {"city": "Edinburgh", "country": "GB", "units": "c"},
        ),
        (
            "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            "get_stock_price",
            {"ticker": "AAPL", "exchange": "NASDAQ"},
        ),
    ]
    assert r.finish_reason.reason == "tool_calls"
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.total_tokens) == (149, 60, 209)


async def test_gemini_thought_signature_and_synthetic_id(connect: Connect) -> None:
    relative = f"{CASSETTES}/test_google/test_google_streaming_tool_call_thought_signature.yaml"
    first, second = await replay(connect, "gemini", relative)
    [call] = first.tool_calls
    assert call.name == "get_country" and call.arguments == {}
    assert call.id.startswith("call_")
    assert call.signature is not None
    assert call.signature.startswith("EpwICpkIAXLI2nxlU6gsWZaZHRYkX1orzuM8vSUF")
    assert first.finish_reason.reason == "tool_calls" and first.finish_reason.raw == "STOP"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (29, 10)
    assert first.usage.reasoning_tokens == 202
    assert second.text == "The capital of Mexico is Mexico City."
    assert second.finish_reason.reason == "stop"
    # The signature goes back on the function call part, the result by name.
    follow = Request(
        "gemini-3-pro-preview",
        [Message.user("q"), first.message, Message.tool_result(call.id, "Mexico")],
    )
    sent = msgspec.json.decode(
        adapter_for(endpoint("gemini", "http://h")).build(follow, stream=True).body
    )
    model_parts = sent["contents"][1]["parts"]
    assert model_parts[0]["thoughtSignature"] == call.signature
    assert sent["contents"][2]["parts"][0]["functionResponse"]["name"] == "get_country"


async def test_anthropic_thinking_signature_round_trips(connect: Connect) -> None:
    relative = f"{CASSETTES}/test_anthropic/test_anthropic_model_thinking_part_stream.yaml"
    [r] = await replay(connect, "anthropic", relative)
    thinking = r.message.content[0]
    assert type(thinking) is ThinkingPart and thinking.text
    assert thinking.signature is not None
    assert thinking.signature.startswith("EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+VurRpNTw")
    assert r.reasoning == thinking.text
    follow = Request("claude", [Message.user("q"), r.message, Message.user("more")])
    sent = msgspec.json.decode(
        adapter_for(endpoint("anthropic", "http://h")).build(follow, stream=True).body
    )
    block = sent["messages"][1]["content"][0]
    assert block == {"type": "thinking", "thinking": thinking.text, "signature": thinking.signature}


async def test_anthropic_redacted_thinking_round_trips(connect: Connect) -> None:
    relative = f"{CASSETTES}/test_anthropic/test_anthropic_model_thinking_part_redacted_stream.yaml"
    responses = await replay(connect, "anthropic", relative)
    redacted = [
        part
        for response in responses
        for part in response.message.content
        if type(part) is RedactedThinkingPart
    ]
    assert redacted
    assert redacted[0].data.startswith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe/p3JTRB6Xz")
