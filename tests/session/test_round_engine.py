"""The one tool-round engine (:mod:`actors.rounds`): the client layer's ``generate()``
and ``stream()`` with tools and a session's loop all run their rounds on it, so a
round observer set once sees every round, whichever of them ran it (and none
outside its block). The observer is the seam docs/extending.md names for a behaviour
every round needs."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from actors.kernel import Runtime
from actors.mockllm import Script, serve_mock_llm
from actors.models.client import Tool, generate, open_client, stream
from actors.models.config import endpoint
from actors.rounds import observe_rounds
from protocol.llm import ToolCall, ToolResult
from tests.session.conftest import StartAgent
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


async def test_generate_stream_and_a_session_run_their_rounds_on_one_engine(
    start_agent: StartAgent,
) -> None:
    tool = Tool("weather", "Weather for a city", CITY, weather)
    asked = [{"tool_calls": [call("weather", city="Paris")]}, {"text": "Sunny."}]
    # generate(), stream() and the unwatched call each take both turns
    client_script = msgspec.convert({"turns": asked * 3, "repeat": False}, Script)
    session_script = turns(
        [call("read_file", file_path="notes.txt"), call("shell", command="echo hi")], "Read."
    )
    watcher = Watcher()
    async with (
        Runtime() as runtime,
        serve_mock_llm(client_script) as server,
        open_client(
            runtime,
            {"openai": endpoint("openai_responses", server.base_url, "sk-test")},
            default_provider="openai",
        ) as client,
    ):
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
