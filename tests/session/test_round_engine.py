"""The one tool-round engine (:mod:`actors.rounds`): the client layer's ``generate()``
and ``stream()`` with tools and a session's loop all run their rounds on it, so a
round observer set once sees every round, whichever of them ran it (and none
outside its block); a new user brings a round host of its own. These are the seams
docs/extending.md names for a new round behaviour."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import trio

from actors.kernel import Runtime
from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.models.client import Client, Tool, generate, open_client, stream
from actors.models.config import endpoint
from actors.rounds import Answer, Move, Stop, observe_rounds, run_rounds
from protocol.llm import Message, Request, Response, ToolCall, ToolDefinition, ToolResult
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import call, turns

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


class Watcher:
    """A toy round observer: what each round ran and how it ended."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def round_started(self, calls: Sequence[ToolCall]) -> None:
        self.seen.append(("started", *(c.name for c in calls)))

    def round_ended(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> None:
        self.seen.append(
            ("ended", *(f"{r.name}:{'error' if r.is_error else 'ok'}" for r in results))
        )


def weather(city: str) -> str:
    return f"72F in {city}"


@asynccontextmanager
async def client_on(script: dict[str, Any]) -> AsyncIterator[tuple[MockLLMServer, Client]]:
    """A client whose default provider is a gateway to the scripted provider."""
    async with (
        Runtime() as runtime,
        serve_mock_llm(msgspec.convert(script, Script)) as server,
        open_client(
            runtime,
            {"openai": endpoint("openai_responses", server.base_url, "sk-test")},
            default_provider="openai",
        ) as client,
    ):
        yield server, client


async def test_generate_stream_and_a_session_run_their_rounds_on_one_engine(
    start_agent: StartAgent,
) -> None:
    tool = Tool("weather", "Weather for a city", CITY, weather)
    asked = [{"tool_calls": [call("weather", city="Paris")]}, {"text": "Sunny."}]
    # generate(), stream() and the unwatched call each take both turns
    session_script = turns(
        [call("read_file", file_path="notes.txt"), call("shell", command="echo hi")], "Read."
    )
    watcher = Watcher()
    async with client_on({"turns": asked * 3, "repeat": False}) as (_, client):
        with observe_rounds(watcher):
            generated = await generate("gpt-5.2", "weather?", tools=[tool], client=client)
            async with stream("gpt-5.2", "weather?", tools=[tool], client=client) as streamed:
                kinds = [type(event).__name__ async for event in streamed]
            async with start_agent("anthropic", session_script) as agent:
                (agent.workdir / "notes.txt").write_text("a note\n")
                await agent.run("read the notes and say hi")
        unwatched = await generate("gpt-5.2", "weather?", tools=[tool], client=client)

    assert generated.text == "Sunny." and unwatched.text == "Sunny."
    assert generated.steps[0].tool_results[0].content == "72F in Paris"
    assert "StepFinish" in kinds and streamed.result is not None
    assert streamed.result.text == "Sunny."
    assert watcher.seen == [
        ("started", "weather"),  # generate()
        ("ended", "weather:ok"),
        ("started", "weather"),  # stream()
        ("ended", "weather:ok"),
        ("started", "read_file", "shell"),  # the session, both calls in one round
        ("ended", "read_file:ok", "shell:ok"),
    ]  # and nothing from the call made outside the block


class Toy:
    """A toy round host: two rounds at most, calls in turn, a note between rounds;
    ``hold`` makes a call wait until cancelled."""

    parallel = False

    def __init__(self, client: Client, hold: bool = False) -> None:
        self.client = client
        self.hold = hold
        self.messages = [Message.user("go")]
        self.ran: list[str] = []
        self.cut: list[str] = []
        self.running = trio.Event()

    def may_ask(self, rounds: int) -> bool:
        return rounds < 2

    async def ask(self) -> AsyncGenerator[str | Answer, None]:
        yield "asking"
        echo = ToolDefinition("echo", "Echo.", {"type": "object", "properties": {}})
        request = Request(model="gpt-5.2", messages=list(self.messages), tools=[echo])
        yield Answer(await self.client.complete(request))

    async def next_move(self, response: Response, rounds: int) -> Move:
        return "run_tools" if response.tool_calls else "stop"

    async def run_call(self, call: ToolCall) -> ToolResult:
        self.ran.append(call.id)
        if self.hold:
            self.running.set()
            await trio.sleep_forever()
        return ToolResult(call.id, "echoed", False, call.name)

    def cut_short(self, calls: Sequence[ToolCall]) -> None:
        self.cut.extend(c.id for c in calls)

    async def after_round(
        self, response: Response, results: list[ToolResult], rounds: int
    ) -> str | Stop | None:
        self.messages.append(response.message)
        self.messages += [Message.tool_result(r.tool_call_id, r.content) for r in results]
        return f"round {rounds}"


async def test_a_new_user_brings_its_own_round_host() -> None:
    echoes = {"tool_calls": [call("echo"), call("echo")]}
    watcher = Watcher()
    async with client_on({"turns": [echoes], "repeat": True}) as (server, client):
        toy = Toy(client)
        with observe_rounds(watcher):
            passed = [item async for item in run_rounds(toy)]
    assert passed == ["asking", "round 1", "asking", "round 2"]  # may_ask stopped at 2
    assert len(server.requests) == 2 and len(toy.ran) == 4 and toy.cut == []
    assert watcher.seen == [("started", "echo", "echo"), ("ended", "echo:ok", "echo:ok")] * 2


async def test_a_round_cancelled_midway_is_cut_short_and_never_ends() -> None:
    echoes = {"tool_calls": [call("echo"), call("echo")]}
    watcher = Watcher()
    async with client_on({"turns": [echoes], "repeat": True}) as (_, client):
        toy = Toy(client, hold=True)
        with observe_rounds(watcher), trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:

                async def drain() -> None:
                    async for _ in run_rounds(toy):
                        pass

                nursery.start_soon(drain)
                await toy.running.wait()
                nursery.cancel_scope.cancel()
    assert len(toy.ran) == 1  # in turn: the second call never started
    assert len(toy.cut) == 2  # yet both are cut short: each keeps an answer
    assert watcher.seen == [("started", "echo", "echo")]
