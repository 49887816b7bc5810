"""§8.7 Tool calling: active and passive tools, rounds, parallel calls, errors, choice."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio

from actors.models.client import Tool, generate
from protocol.llm import Message, Request, ToolChoice
from tests.models.checklist.conftest import HANG_GUARD, MODEL, PROVIDERS, Spec

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def calls(*cities: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "weather", "arguments": {"city": c}} for c in cities]}


def weather_tool(log: list[str] | None = None) -> Tool:
    def weather(city: str) -> str:
        if log is not None:
            log.append(city)
        return f"72F in {city}"

    return Tool("weather", "Weather for a city", CITY, weather)


def results_in(provider: str, body: dict[str, Any]) -> list[str]:
    """The tool result texts a request carries, in order."""
    if provider == "openai":
        return [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]
    if provider == "anthropic":
        return [
            b["content"]
            for m in body["messages"]
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
    return [
        str(p["functionResponse"]["response"].get("result"))
        for c in body["contents"]
        for p in c["parts"]
        if "functionResponse" in p
    ]


async def test_active_tools_loop_automatically(spec: Spec) -> None:
    log: list[str] = []
    async with spec({"turns": [calls("Paris"), {"text": "Sunny."}]}) as (server, client):
        result = await generate("gpt-5.2", "weather?", tools=[weather_tool(log)], client=client)
    assert log == ["Paris"] and result.text == "Sunny." and len(server.requests) == 2


async def test_passive_tools_return_calls_to_the_caller(spec: Spec) -> None:
    passive = Tool("weather", "Weather", CITY)
    async with spec({"turns": [calls("Paris"), {"text": "never"}]}) as (server, client):
        result = await generate("gpt-5.2", "weather?", tools=[passive], client=client)
    assert [c.arguments for c in result.tool_calls] == [{"city": "Paris"}]
    assert result.tool_results == [] and len(server.requests) == 1


@pytest.mark.parametrize("rounds", [1, 2, 3])
async def test_max_tool_rounds_is_respected(spec: Spec, rounds: int) -> None:
    log: list[str] = []
    async with spec({"turns": [calls("X")]}) as (server, client):  # always calls again
        result = await generate(
            "gpt-5.2", "loop", tools=[weather_tool(log)], max_tool_rounds=rounds, client=client
        )
    assert len(log) == rounds
    assert len(server.requests) == rounds + 1 == len(result.steps)
    assert result.tool_calls and result.tool_results == []  # the last calls were not run


async def test_max_tool_rounds_zero_disables_execution(spec: Spec) -> None:
    log: list[str] = []
    async with spec({"turns": [calls("X")]}) as (server, client):
        result = await generate(
            "gpt-5.2", "x", tools=[weather_tool(log)], max_tool_rounds=0, client=client
        )
    assert log == [] and len(server.requests) == 1 and result.tool_calls


async def test_parallel_calls_run_concurrently(spec: Spec) -> None:
    arrived = 0
    everyone = trio.Event()

    async def meet(city: str) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            everyone.set()
        await everyone.wait()  # only returns if all three run at the same time
        return city

    tool = Tool("weather", "w", CITY, meet)
    async with spec({"turns": [calls("A", "B", "C"), {"text": "ok"}]}) as (_, client):
        with trio.fail_after(HANG_GUARD):
            result = await generate("gpt-5.2", "x", tools=[tool], client=client)
    assert [r.content for r in result.steps[0].tool_results] == ["A", "B", "C"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_parallel_results_go_back_in_one_request_in_order(spec: Spec, provider: str) -> None:
    async def slow_first(city: str) -> str:
        await trio.sleep(0.2 if city == "A" else 0)  # finishes last, still listed first
        return f"weather {city}"

    tool = Tool("weather", "w", CITY, slow_first)
    async with spec({"turns": [calls("A", "B", "C"), {"text": "ok"}]}) as (server, client):
        await generate(MODEL[provider], "x", tools=[tool], provider=provider, client=client)
    assert len(server.requests) == 2
    assert results_in(provider, server.requests[1].json()) == [
        "weather A",
        "weather B",
        "weather C",
    ]


async def test_tool_errors_become_error_results(spec: Spec) -> None:
    def broken(city: str) -> str:
        raise RuntimeError(f"no data for {city}")

    tool = Tool("weather", "w", CITY, broken)
    async with spec({"turns": [calls("Oslo"), {"text": "sorry"}]}) as (server, client):
        result = await generate("gpt-5.2", "x", tools=[tool], client=client)
    (failed,) = result.steps[0].tool_results
    assert failed.is_error and "no data for Oslo" in str(failed.content)
    assert result.text == "sorry"
    assert "no data for Oslo" in str(server.requests[1].json())


async def test_unknown_tool_gets_an_error_result(spec: Spec) -> None:
    script = {"turns": [{"tool_calls": [{"name": "teleport"}]}, {"text": "ok"}]}
    async with spec(script) as (server, client):
        result = await generate("gpt-5.2", "x", tools=[weather_tool()], client=client)
    (unknown,) = result.steps[0].tool_results
    assert unknown.is_error and unknown.content == "Unknown tool: teleport"
    assert len(server.requests) == 2


CHOICES = {
    "openai": {
        "auto": "auto",
        "none": "none",
        "required": "required",
        "named": {"type": "function", "name": "weather"},
    },
    "anthropic": {
        "auto": {"type": "auto"},
        "none": None,
        "required": {"type": "any"},
        "named": {"type": "tool", "name": "weather"},
    },
    "gemini": {
        "auto": {"mode": "AUTO"},
        "none": {"mode": "NONE"},
        "required": {"mode": "ANY"},
        "named": {"mode": "ANY", "allowedFunctionNames": ["weather"]},
    },
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", ["auto", "none", "required", "named"])
async def test_tool_choice_modes(spec: Spec, provider: str, mode: str) -> None:
    choice = ToolChoice(mode, "weather" if mode == "named" else None)  # type: ignore[arg-type]
    request = Request(
        MODEL[provider],
        [Message.user("x")],
        tools=[weather_tool().definition()],
        tool_choice=choice,
        provider=provider,
    )
    async with spec() as (server, client):
        await client.complete(request)
    body = server.requests[0].json()
    wanted = CHOICES[provider][mode]
    if provider == "openai":
        assert body["tool_choice"] == wanted
    elif provider == "anthropic":
        if wanted is None:  # "none": Anthropic gets no tools at all
            assert "tools" not in body and "tool_choice" not in body
        else:
            assert body["tool_choice"] == wanted
    else:
        assert body["toolConfig"]["functionCallingConfig"] == wanted


class Move(msgspec.Struct, frozen=True):
    x: int
    y: int


async def test_arguments_parsed_and_validated_before_the_handler(spec: Spec) -> None:
    seen: list[Move] = []
    tool = Tool.from_struct("move", Move, lambda move: seen.append(move) or "moved")
    script = {
        "turns": [
            {"tool_calls": [{"name": "move", "arguments": {"x": 1, "y": "two"}}]},
            {"tool_calls": [{"name": "move", "arguments": "{not json"}]},
            {"tool_calls": [{"name": "move", "arguments": {"x": 1, "y": 2}}]},
            {"text": "done"},
        ],
        "repeat": False,
    }
    async with spec(script) as (_, client):
        result = await generate("gpt-5.2", "x", tools=[tool], max_tool_rounds=3, client=client)
    first, second, third = (step.tool_results[0] for step in result.steps[:3])
    assert first.is_error and "Expected `int`, got `str`" in str(first.content)
    assert second.is_error and "JSON" in str(second.content)
    assert not third.is_error and seen == [Move(1, 2)]


async def test_step_results_track_each_step(spec: Spec) -> None:
    script = {
        "turns": [
            {**calls("A"), "usage": {"input": 10, "output": 5}},
            {**calls("B"), "usage": {"input": 20, "output": 6}},
            {"text": "done", "usage": {"input": 30, "output": 7}},
        ],
        "repeat": False,
    }
    async with spec(script) as (_, client):
        result = await generate(
            "gpt-5.2", "x", tools=[weather_tool()], max_tool_rounds=5, client=client
        )
    assert [len(s.tool_calls) for s in result.steps] == [1, 1, 0]
    assert [r.content for s in result.steps for r in s.tool_results] == ["72F in A", "72F in B"]
    assert [s.usage.input_tokens for s in result.steps] == [10, 20, 30]
    assert result.total_usage.input_tokens == 60 and result.total_usage.output_tokens == 18
    assert result.usage.input_tokens == 30
