"""Agentic loop benchmark: client CPU per tool round, per wire, against a raw loop.

    python bench/loop.py          # a table
    python bench/loop.py --json   # one JSON object
    python bench/loop.py --quick  # fewer rounds and repeats (a smoke run)
    BENCH_WIRE=anthropic python bench/loop.py   # one wire only

The scripted provider runs in another process (``troupe mock-llm --rounds N``), so
the CPU measured here is the client's alone. For each wire (OpenAI Responses, Chat
Completions, Anthropic Messages, Gemini, Bedrock Converse; all streamed), a real session (gateway
actor, model stream, tool registry, events, history) does N rounds of a trivial
tool, and a raw loop (httpx + the standard ``json`` module, no Troupe) does the same
N rounds: the same system prompt and tool definitions (taken from the session's
first request), its history grown by hand, the stream read line by line (Converse's
AWS event-stream frames by botocore's decoder, as the adapter reads them). The two
alternate (which goes first swaps every repeat), both warmed alike; the figure is
the session's client CPU over the raw loop's, per repeat, min and median. Then an
MCP tool round (the SDK-built fixture server over stdio) against the same round with
a native tool, in the same run (``bench/mcp_round.py`` alone measures only that).

Then many short sessions at once (``bench/many_sessions.py``): 50 sessions x 20 rounds
against 50 raw loops at the same concurrency, each side in a fresh process: client
CPU per round and memory growth, session over raw.

Last, the safety policy's own cost per tool call (``bench/policy_cost.py``): the
figure is microseconds added over the same call without the policy gate, for a
declared read tool, a repeated shell line, and a shell line never seen before.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.mockllm import Script, serve_mock_llm
from actors.models import RetryPolicy, open_gateway
from actors.models.config import Wire, endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import (
    ProviderProfile,
    anthropic_profile,
    gemini_profile,
    openai_profile,
)
from bench import many_sessions, policy_cost
from bench.mcp_round import mcp_round_figures
from bench.mock_provider import NOOP_TOOL, start_mock_llm
from bench.report import Figure, emit, parse_args
from environments.local import LocalEnvironment
from protocol.session import SessionConfig, Submit, ToolCalling, WaitIdle

WIRES: list[Wire] = ["openai_responses", "openai_chat", "anthropic", "gemini", "bedrock_converse"]
PROFILES: dict[str, Callable[[str], ProviderProfile]] = {
    "openai_responses": openai_profile,
    "openai_chat": openai_profile,
    "anthropic": anthropic_profile,
    "gemini": gemini_profile,
    "bedrock_converse": anthropic_profile,
}
PROMPT = "run the rounds"


def _profile(wire: str) -> ProviderProfile:
    profile = PROFILES[wire]("mock-model")
    profile.registry.register(NOOP_TOOL)
    return profile


async def session_rounds(
    wire: Wire, url: str, workdir: Path, tool_calling: ToolCalling = "native"
) -> tuple[float, float]:
    """(wall s, client CPU s) for a real session doing every round the mock asks;
    ``tool_calling="text"``: the calls written in the answer's text (the mock then
    writes them so), parsed with early detection."""
    async with Runtime() as runtime:
        ep = endpoint(wire, url, "bench-key")
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            # No workspace snapshots: the raw loop keeps none (bench/snapshots.py
            # measures what one costs).
            config = SessionConfig(
                enable_loop_detection=False, tool_calling=tool_calling, snapshots=False
            )
            session = await runtime.spawn(SessionActor(_profile(wire), env, gateway, config))
            wall, cpu = time.perf_counter(), time.process_time()
            await session.tell(Submit(PROMPT))
            await session.ask(WaitIdle(), timeout=None)
            return time.perf_counter() - wall, time.process_time() - cpu


async def first_request(wire: Wire, workdir: Path) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of the session's first request (a one-round mock)."""
    async with serve_mock_llm(Script(rounds=0)) as server, Runtime() as runtime:
        ep = endpoint(wire, server.base_url, "bench-key")
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            config = SessionConfig(enable_loop_detection=False)
            session = await runtime.spawn(SessionActor(_profile(wire), env, gateway, config))
            await session.tell(Submit(PROMPT))
            await session.ask(WaitIdle(), timeout=None)
    request = server.requests[0]
    return request.path, request.json()


# -- the raw loops: what each wire needs, written by hand ------------------------------


def _sse_data(line: str) -> Any:
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    return None if data == "[DONE]" else json.loads(data)


class RawAnthropic:
    history_key = "messages"

    def __init__(self) -> None:
        self.call: dict[str, Any] | None = None
        self.args: list[str] = []

    def read(self, event: Any) -> None:
        block = event.get("content_block") or {}
        if block.get("type") == "tool_use":
            self.call = {"type": "tool_use", "id": block["id"], "name": block["name"]}
        delta = event.get("delta") or {}
        if delta.get("type") == "input_json_delta":
            self.args.append(delta["partial_json"])

    def answer(self, history: list[Any]) -> bool:
        if self.call is None:
            return False
        call = {**self.call, "input": json.loads("".join(self.args) or "{}")}
        history.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": "ok"}
        history.append({"role": "user", "content": [result]})
        return True


class RawChat:
    history_key = "messages"

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, Any]] = {}

    def read(self, event: Any) -> None:
        for choice in event.get("choices") or ():
            for call in (choice.get("delta") or {}).get("tool_calls") or ():
                slot = self.calls.setdefault(call["index"], {"id": "", "name": "", "args": ""})
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["name"] = function.get("name") or slot["name"]
                slot["args"] += function.get("arguments") or ""

    def answer(self, history: list[Any]) -> bool:
        if not self.calls:
            return False
        calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["args"]},
            }
            for c in self.calls.values()
        ]
        history.append({"role": "assistant", "content": None, "tool_calls": calls})
        history += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
        return True


class RawResponses:
    history_key = "input"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def read(self, event: Any) -> None:
        item = event.get("item") or {}
        if event.get("type") == "response.output_item.done" and item.get("type") == "function_call":
            self.calls.append(item)

    def answer(self, history: list[Any]) -> bool:
        for item in self.calls:
            history.append(
                {
                    "type": "function_call",
                    "call_id": item["call_id"],
                    "name": item["name"],
                    "arguments": item["arguments"],
                }
            )
            history.append(
                {"type": "function_call_output", "call_id": item["call_id"], "output": "ok"}
            )
        return bool(self.calls)


class RawGemini:
    history_key = "contents"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def read(self, event: Any) -> None:
        for candidate in event.get("candidates") or ():
            for part in (candidate.get("content") or {}).get("parts") or ():
                if "functionCall" in part:
                    self.calls.append(part)

    def answer(self, history: list[Any]) -> bool:
        if not self.calls:
            return False
        history.append({"role": "model", "parts": self.calls})
        results = [
            {"functionResponse": {"name": p["functionCall"]["name"], "response": {"result": "ok"}}}
            for p in self.calls
        ]
        history.append({"role": "user", "parts": results})
        return True


class RawConverse:
    """Bedrock Converse: events named by ``:event-type``, read with botocore's decoder
    (as the adapter does), the calls' inputs joined from their deltas."""

    history_key = "messages"

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, Any]] = {}

    def read(self, event: Any) -> None:
        name, data = event
        index = data.get("contentBlockIndex", 0)
        if name == "contentBlockStart" and "toolUse" in data["start"]:
            self.calls[index] = {**data["start"]["toolUse"], "input": []}
        elif name == "contentBlockDelta" and "toolUse" in data["delta"]:
            self.calls[index]["input"].append(data["delta"]["toolUse"]["input"])

    def answer(self, history: list[Any]) -> bool:
        if not self.calls:
            return False
        uses = [
            {"toolUse": {**c, "input": json.loads("".join(c["input"]) or "{}")}}
            for c in self.calls.values()
        ]
        history.append({"role": "assistant", "content": uses})
        results = [
            {"toolResult": {"toolUseId": c["toolUseId"], "content": [{"text": "ok"}]}}
            for c in self.calls.values()
        ]
        history.append({"role": "user", "content": results})
        return True


RAW: dict[str, Callable[[], Any]] = {
    "openai_responses": RawResponses,
    "openai_chat": RawChat,
    "anthropic": RawAnthropic,
    "gemini": RawGemini,
    "bedrock_converse": RawConverse,
}


async def _read_events(wire: str, response: httpx.Response, reader: Any) -> None:
    if wire == "bedrock_converse":
        from botocore.eventstream import EventStreamBuffer

        buffer = EventStreamBuffer()
        async for chunk in response.aiter_bytes():
            buffer.add_data(chunk)
            for message in buffer:
                reader.read((message.headers[":event-type"], json.loads(message.payload)))
        return
    async for line in response.aiter_lines():
        event = _sse_data(line)
        if event is not None:
            reader.read(event)


async def raw_rounds(wire: str, url: str, path: str, first: dict[str, Any]) -> tuple[float, float]:
    """The same exchange by hand: build JSON, stream SSE, find the tool calls, repeat."""
    key = RAW[wire]().history_key
    history = list(first[key])
    headers = {"authorization": "Bearer bench-key", "x-api-key": "bench-key"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        wall, cpu = time.perf_counter(), time.process_time()
        while True:
            reader = RAW[wire]()
            body = {**first, key: history}
            async with client.stream("POST", path, json=body) as response:
                await _read_events(wire, response, reader)
            if not reader.answer(history):
                return time.perf_counter() - wall, time.process_time() - cpu


# -- the run ---------------------------------------------------------------------------


def measure(
    rounds: int, repeats: int, wires: list[Wire] = WIRES
) -> dict[str, dict[str, list[float]]]:
    results: dict[str, dict[str, list[float]]] = {
        wire: {key: [] for key in ("session", "raw", "session_wall", "raw_wall", "text", "native")}
        for wire in wires
    }
    text_wire: Wire = "openai_chat"
    process, url = start_mock_llm("--rounds", str(rounds), "--text-rounds")
    try:
        with tempfile.TemporaryDirectory() as directory:
            workdir = Path(directory)
            firsts = {wire: trio.run(first_request, wire, workdir) for wire in wires}
            for wire in wires:  # warm both sides alike
                trio.run(raw_rounds, wire, url, *firsts[wire])
                trio.run(session_rounds, wire, url, workdir)
            if text_wire in wires:
                trio.run(session_rounds, text_wire, url, workdir, "text")
            for repeat in range(repeats):
                for wire in wires:
                    sides = ["raw", "session"] if repeat % 2 == 0 else ["session", "raw"]
                    for side in sides:
                        if side == "raw":
                            wall, cpu = trio.run(raw_rounds, wire, url, *firsts[wire])
                        else:
                            wall, cpu = trio.run(session_rounds, wire, url, workdir)
                        results[wire][side].append(cpu)
                        results[wire][f"{side}_wall"].append(wall)
                if text_wire in wires:
                    # Text calling against native calling on the same wire, alternated.
                    for calling in ("text", "native")[:: 1 if repeat % 2 == 0 else -1]:
                        _, cpu = trio.run(session_rounds, text_wire, url, workdir, calling)
                        results[text_wire][calling].append(cpu)
    finally:
        process.terminate()
        process.wait()
    return results


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    rounds, repeats = (30, 2) if args.quick else (200, 5)
    wires: list[Wire] = [
        w for w in WIRES if os.environ.get("BENCH_WIRE", w) == w
    ]  # one wire, if asked
    results = measure(rounds, repeats, wires)
    per = 1000 / rounds
    figures = [
        Figure("rounds", "tool rounds per run", rounds, ""),
        Figure("repeats", "interleaved repeats", repeats, ""),
    ]
    for wire in wires:
        got = results[wire]
        ratios = [s / r for s, r in zip(got["session"], got["raw"], strict=True)]
        median = statistics.median(ratios)
        figures += [
            Figure(
                f"{wire}_session_cpu_ms",
                f"{wire}: session CPU / round (median)",
                statistics.median(got["session"]) * per,
                "ms",
            ),
            Figure(
                f"{wire}_raw_cpu_ms",
                f"{wire}: raw loop CPU / round (median)",
                statistics.median(got["raw"]) * per,
                "ms",
            ),
            Figure(f"{wire}_cpu_ratio_min", f"{wire}: session / raw CPU (min)", min(ratios), "x"),
            Figure(
                f"{wire}_cpu_ratio_median",
                f"{wire}: session / raw CPU (median)",
                median,
                "x",
                "<= 1.0",
                median <= 1.0,
            ),
            Figure(
                f"{wire}_wall_ratio_median",
                f"{wire}: session / raw wall (median)",
                statistics.median(
                    s / r for s, r in zip(got["session_wall"], got["raw_wall"], strict=True)
                ),
                "x",
            ),
        ]
    if "openai_chat" in wires:
        got = results["openai_chat"]
        ratios = [t / n for t, n in zip(got["text"], got["native"], strict=True)]
        figures += [
            Figure(
                "openai_chat_text_cpu_ms",
                "openai_chat text calls: session CPU / round (median)",
                statistics.median(got["text"]) * per,
                "ms",
            ),
            Figure(
                "openai_chat_text_native_cpu_ms",
                "openai_chat native calls, same repeats: CPU / round (median)",
                statistics.median(got["native"]) * per,
                "ms",
            ),
            Figure("text_cpu_ratio_min", "text / native calling CPU (min)", min(ratios), "x"),
            Figure(
                "text_cpu_ratio_median",
                "text / native calling CPU (median)",
                statistics.median(ratios),
                "x",
            ),
        ]
    figures += many_sessions.figures(*((20, 10, 2) if args.quick else (50, 20, 5)))
    figures += mcp_round_figures(*((10, 2) if args.quick else (50, 4)))
    figures += policy_figures(*((100, 3) if args.quick else (300, 9)))
    title = "Troupe agentic loop, per wire (text calls, an MCP tool round, the policy's cost)"
    emit(title, figures, args.json)


def policy_figures(calls: int, repeats: int) -> list[Figure]:
    """What the safety policy adds to a tool round (bench/policy_cost.py): the
    same call through the registry with and without the policy gate, alternated."""
    added = trio.run(policy_cost.measure, calls, repeats)
    figures: list[Figure] = []
    for kind, (low, middle) in added.items():
        target = "" if kind == "noop" else "< 100"
        figures += [
            Figure(f"policy_{kind}_us_min", f"policy cost, {kind} call (min)", low, "us"),
            Figure(
                f"policy_{kind}_us_median",
                f"policy cost, {kind} call (median)",
                middle,
                "us",
                target,
                middle < 100 if target else None,
            ),
        ]
    return figures


if __name__ == "__main__":
    main()
