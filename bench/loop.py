"""Agentic loop benchmark: wall time and client CPU per tool round.

    python bench/loop.py          # a table
    python bench/loop.py --json   # one JSON object

The scripted provider runs in another process (``troupe mock-llm --rounds N``), so
the CPU measured here is the client's alone. A real session (gateway actor, model
stream, tool registry, events, history) does N rounds of a trivial tool; a raw
httpx loop speaking the same wire format (Anthropic Messages, streamed) does the
same N rounds in the same run. The difference is what Troupe's loop costs.
The policy's own cost per call (gate against no gate, same run) is measured by
:mod:`bench.policy_cost` and reported beside it.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.models import RetryPolicy, open_gateway
from actors.models.config import endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import anthropic_profile
from bench.mock_provider import NOOP_TOOL, start_mock_llm
from bench.policy_cost import measure as measure_policy
from bench.report import Figure, emit, parse_args
from environments.local import LocalEnvironment
from protocol.session import SessionConfig, Submit, WaitIdle


async def session_rounds(url: str, rounds: int, workdir: Path) -> tuple[float, float]:
    async with Runtime() as runtime:
        ep = endpoint("anthropic", url, "bench-key")
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            profile = anthropic_profile("mock-model")
            profile.registry.register(NOOP_TOOL)
            config = SessionConfig(enable_loop_detection=False)
            session = await runtime.spawn(SessionActor(profile, env, gateway, config))
            wall, cpu = time.perf_counter(), time.process_time()
            await session.tell(Submit("run the rounds"))
            await session.ask(WaitIdle(), timeout=None)
            return time.perf_counter() - wall, time.process_time() - cpu


async def raw_rounds(url: str, rounds: int) -> tuple[float, float]:
    """The same exchange by hand: build JSON, stream SSE, find the tool call, repeat."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "run the rounds"}]
    tools = [{"name": "noop", "description": "Do nothing.", "input_schema": {"type": "object"}}]
    headers = {"x-api-key": "bench-key", "anthropic-version": "2023-06-01"}
    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        wall, cpu = time.perf_counter(), time.process_time()
        while True:
            body = {"model": "mock-model", "max_tokens": 1024, "stream": True, "tools": tools}
            body["messages"] = messages
            call: dict[str, Any] | None = None
            async with client.stream("POST", "/v1/messages", json=body) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    event = json.loads(line[5:])
                    block = event.get("content_block") or {}
                    if block.get("type") == "tool_use":
                        call = {"type": "tool_use", "id": block["id"], "name": block["name"]}
            if call is None:
                return time.perf_counter() - wall, time.process_time() - cpu
            messages.append({"role": "assistant", "content": [{**call, "input": {}}]})
            result = {"type": "tool_result", "tool_use_id": call["id"], "content": "ok"}
            messages.append({"role": "user", "content": [result]})


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    rounds = 30 if args.quick else 200
    process, url = start_mock_llm("--rounds", str(rounds))
    try:
        with tempfile.TemporaryDirectory() as directory:
            trio.run(raw_rounds, url, 5)  # warm both paths up
            trio.run(session_rounds, url, 5, Path(directory))
            raw_wall, raw_cpu = trio.run(raw_rounds, url, rounds)
            wall, cpu = trio.run(session_rounds, url, rounds, Path(directory))
    finally:
        process.terminate()
        process.wait()
    per = 1000 / rounds
    overhead = (cpu - raw_cpu) * per
    figures = [
        Figure("rounds", "tool rounds", rounds, ""),
        Figure("session_wall_ms_per_round", "session wall / round", wall * per, "ms"),
        Figure("raw_wall_ms_per_round", "raw httpx wall / round", raw_wall * per, "ms"),
        Figure("wall_ratio", "session / raw wall", wall / raw_wall, "x"),
        Figure("session_cpu_ms_per_round", "session client CPU / round", cpu * per, "ms"),
        Figure("raw_cpu_ms_per_round", "raw httpx client CPU / round", raw_cpu * per, "ms"),
        Figure("cpu_ratio", "session / raw CPU", cpu / raw_cpu, "x"),
        Figure(
            "cpu_overhead_ms_per_round",
            "CPU above the raw loop / round",
            overhead,
            "ms",
            "< 1 ms",
            overhead < 1.0,
        ),
    ]
    policy = trio.run(measure_policy, 100 if args.quick else 300)
    for kind, (low, middle) in policy.items():
        figures.append(
            Figure(f"policy_{kind}_us_min", f"policy cost / {kind} call, min", low, "us")
        )
        figures.append(
            Figure(
                f"policy_{kind}_us_median",
                f"policy cost / {kind} call, median",
                middle,
                "us",
                "< 100 us",
                middle < 100,
            )
        )
    emit("Troupe agentic loop", figures, args.json)


if __name__ == "__main__":
    main()
