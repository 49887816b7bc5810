"""§8.4 Generation: generate(), stream(), generate_object(), cancellation, timeouts."""

from __future__ import annotations

import itertools
from typing import Any

import msgspec
import pytest
import trio

from actors.models.client import (
    AbortController,
    NoObjectGeneratedError,
    StreamAccumulator,
    TimeoutConfig,
    generate,
    generate_object,
    stream,
)
from actors.models.errors import AbortError, ConfigurationError, RequestTimeoutError
from protocol.llm import Finish, Message, StreamStart, TextDelta, TextEnd, TextStart
from tests.models.checklist.conftest import HANG_GUARD, MODEL, PROVIDERS, Spec

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


class Person(msgspec.Struct, frozen=True):
    name: str
    age: int


async def test_generate_with_a_prompt(spec: Spec) -> None:
    async with spec({"turns": [{"text": "Hello!"}]}) as (server, client):
        result = await generate("gpt-5.2", "Say hello", system="Be nice.", client=client)
    assert result.text == "Hello!"
    body = server.requests[0].json()
    assert body["instructions"] == "Be nice."
    assert body["input"][0]["content"][0]["text"] == "Say hello"


async def test_generate_with_messages(spec: Spec) -> None:
    history = [Message.user("one"), Message.assistant("two"), Message.user("three")]
    async with spec({"turns": [{"text": "four"}]}) as (server, client):
        result = await generate("gpt-5.2", messages=history, client=client)
    assert result.text == "four"
    roles = [item["role"] for item in server.requests[0].json()["input"]]
    assert roles == ["user", "assistant", "user"]


async def test_generate_rejects_prompt_and_messages_together(spec: Spec) -> None:
    async with spec() as (server, client):
        with pytest.raises(ConfigurationError, match="not both"):
            await generate("gpt-5.2", "a", messages=[Message.user("b")], client=client)
    assert server.requests == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stream_text_deltas_concatenate_to_the_response(spec: Spec, provider: str) -> None:
    text = "A haiku: old pond, a frog jumps in, the sound of water."
    async with (
        spec({"turns": [{"text": text}]}) as (_, client),
        stream(MODEL[provider], "Write a haiku", provider=provider, client=client) as result,
    ):
        deltas = [event.delta async for event in result if type(event) is TextDelta]
    assert len(deltas) > 1
    assert "".join(deltas) == result.response().text == text


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stream_start_and_finish_with_metadata(spec: Spec, provider: str) -> None:
    script = {
        "turns": [{"text": "hi", "usage": {"input": 9, "output": 2}}],
        "model": "served-model",
    }
    async with (
        spec(script) as (_, client),
        stream(MODEL[provider], "x", provider=provider, client=client) as result,
    ):
        seen = [event async for event in result]
    start, finish = seen[0], seen[-1]
    assert type(start) is StreamStart and start.model == "served-model"
    assert type(finish) is Finish
    assert finish.finish_reason.reason == "stop"
    assert (finish.usage.input_tokens, finish.usage.output_tokens) == (9, 2)
    assert finish.response.text == "hi"


async def test_streaming_follows_start_delta_end(spec: Spec) -> None:
    async with (
        spec({"turns": [{"text": "segmented text"}]}) as (_, client),
        stream("gpt-5.2", "x", client=client) as result,
    ):
        seen = [event async for event in result]
    text_events = [e for e in seen if isinstance(e, TextStart | TextDelta | TextEnd)]
    assert type(text_events[0]) is TextStart and type(text_events[-1]) is TextEnd
    ids = {e.text_id for e in text_events}
    assert len(ids) == 1
    assert text_events[-1].text == "segmented text"
    accumulator = StreamAccumulator()
    for event in seen:
        accumulator.process(event)
    final = seen[-1]
    assert isinstance(final, Finish)
    assert accumulator.response() == final.response


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("schema", [PERSON, Person], ids=["json-schema", "msgspec-struct"])
async def test_generate_object_returns_validated_output(
    spec: Spec, provider: str, schema: dict[str, Any] | type
) -> None:
    answer = {"name": "Alice", "age": 30}
    turn = (
        {"tool_calls": [{"name": "json_output", "arguments": answer}]}
        if provider == "anthropic"
        else {"text": msgspec.json.encode(answer).decode()}
    )
    async with spec({"turns": [turn]}) as (server, client):
        result = await generate_object(
            MODEL[provider],
            "Alice is 30 years old",
            schema=schema,
            provider=provider,
            client=client,
        )
    output = result.output
    if schema is Person:
        assert output == Person("Alice", 30)
    else:
        assert output == answer
    body = server.requests[0].json()
    if provider == "openai":
        assert body["text"]["format"]["type"] == "json_schema"
        assert body["text"]["format"]["schema"]["required"] == ["name", "age"]
    elif provider == "gemini":
        assert body["generationConfig"]["responseMimeType"] == "application/json"
    else:
        assert body["tool_choice"] == {"type": "tool", "name": "json_output"}


@pytest.mark.parametrize(
    "text", ['{"name": "Alice"}', '{"name": "Alice", "age": "thirty"}', "Alice, 30"]
)
async def test_generate_object_raises_when_the_output_does_not_fit(spec: Spec, text: str) -> None:
    async with spec({"turns": [{"text": text}]}) as (server, client):
        with pytest.raises(NoObjectGeneratedError):
            await generate_object("gpt-5.2", "x", schema=PERSON, client=client)
    assert len(server.requests) == 1  # validation failures are not retried


async def test_abort_cancels_generate(spec: Spec) -> None:
    controller = AbortController()
    async with spec({"turns": [{"text": "slow", "fault": {"stall_after": 0}}]}) as (server, client):
        async with trio.open_nursery() as nursery:

            async def abort_when_asked() -> None:
                await server.wait_until(lambda s: len(s.requests) == 1)
                controller.abort()

            nursery.start_soon(abort_when_asked)
            with trio.fail_after(HANG_GUARD), pytest.raises(AbortError):
                await generate("gpt-5.2", "x", abort_signal=controller.signal, client=client)
        with trio.fail_after(HANG_GUARD):
            await server.wait_until(lambda s: s.disconnects == 1)  # the request was closed


async def test_abort_cancels_stream(spec: Spec) -> None:
    controller = AbortController()
    script = {"turns": [{"text": "a long streamed answer", "event_delay": 30}]}
    async with spec(script) as (server, client):
        seen = []
        with trio.fail_after(HANG_GUARD), pytest.raises(AbortError):
            async with stream("gpt-5.2", "x", abort_signal=controller, client=client) as result:
                async for event in result:
                    seen.append(event)
                    controller.abort()
        with trio.fail_after(HANG_GUARD):
            await server.wait_until(lambda s: s.disconnects == 1)
    assert len(seen) == 1


async def test_total_timeout(spec: Spec) -> None:
    async with spec({"turns": [{"text": "late", "delay": 30}]}) as (_, client):
        with (
            trio.fail_after(HANG_GUARD),
            pytest.raises(RequestTimeoutError, match=r"longer than 0\.3 s"),
        ):
            await generate("gpt-5.2", "x", timeout=0.3, client=client)


async def test_per_step_timeout(spec: Spec) -> None:
    script = {
        "turns": [
            {"tool_calls": [{"name": "noop"}]},
            {"text": "late", "delay": 30},
        ]
    }
    from actors.models.client import Tool

    tool = Tool("noop", execute=lambda: "done")
    async with spec(script) as (server, client):
        with trio.fail_after(HANG_GUARD), pytest.raises(RequestTimeoutError, match="per step"):
            await generate(
                "gpt-5.2",
                "x",
                tools=[tool],
                timeout=TimeoutConfig(total=60, per_step=0.3),
                max_retries=0,
                client=client,
            )
    assert len(server.requests) == 2  # the first step finished; the second timed out


async def test_stream_per_step_timeout(spec: Spec) -> None:
    async with spec({"turns": [{"text": "slow stream", "event_delay": 30}]}) as (_, client):
        with trio.fail_after(HANG_GUARD), pytest.raises(RequestTimeoutError):
            async with stream(
                "gpt-5.2", "x", timeout=TimeoutConfig(per_step=0.3), client=client
            ) as result:
                [event async for event in result]


async def test_stream_result_partial_response_and_text_stream(spec: Spec) -> None:
    text = "one two three four five six seven eight"
    async with (
        spec({"turns": [{"text": text}], "delta_size": 4}) as (_, client),
        stream("gpt-5.2", "x", client=client) as result,
    ):
        partials = []
        async for delta in result.text_stream:
            partial = result.partial_response
            assert partial is not None
            partials.append(partial.text)
            assert delta
    assert partials[0] == text[:4] and partials[-1] == text
    assert all(a == b[: len(a)] for a, b in itertools.pairwise(partials))  # it only grows
    assert result.response().text == text and result.result is not None
