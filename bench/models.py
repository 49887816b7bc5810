"""Model layer benchmark: the gateway against raw httpx, on the scripted provider.

    python bench/models.py          # a table
    python bench/models.py --json   # one JSON object

``troupe mock-llm`` runs in a child process so that the CPU time measured here is
the client's alone. Requests/s and CPU per request through the gateway (admission
by the actor, request building, parsing into a Response), and requests/s through the
spec's client layer with logging and retry middleware, are given as ratios to raw
httpx posting a prebuilt body to the same server in the same run (interleaved,
repeated; min and median of the per-repeat ratios); stream events
parsed per second are measured end to end and for the parsers alone.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.mockllm import Script, ToolCallSpec, Turn
from actors.mockllm.answer import make_answer
from actors.mockllm.wires import WIRES
from actors.models import ModelSession, RetryPolicy, open_gateway
from actors.models.client import LoggingMiddleware, RetryMiddleware, open_client
from actors.models.config import endpoint
from actors.models.registry import adapter_for
from actors.models.sse import SSEParser
from bench.mock_provider import start_scripted
from bench.report import Figure, emit, parse_args
from protocol.llm import Message, Request

CONCURRENCY = 8
REPEATS = 5
TEXT = "The quick brown fox jumps over the lazy dog. " * 8
REQUEST = Request(
    "mock-model",
    [Message.system("You are a benchmark."), Message.user("Say something.")],
)


async def raw_httpx(url: str, count: int) -> tuple[float, float]:
    """(requests/s, CPU s/request) for httpx posting a prebuilt body, no parsing."""
    body = adapter_for(endpoint("openai_chat", url, "k")).build(REQUEST, stream=False).body
    target = f"{url}/v1/chat/completions"
    headers = {"content-type": "application/json", "authorization": "Bearer k"}
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits) as client:

        async def worker(n: int) -> None:
            for _ in range(n):
                response = await client.post(target, content=body, headers=headers)
                assert response.status_code == 200 and response.content

        return await _timed(worker, count)


async def through_gateway(url: str, count: int) -> tuple[float, float]:
    ep = endpoint("openai_chat", url, "k", max_concurrency=CONCURRENCY)
    async with Runtime() as runtime, open_gateway(runtime, ep, RetryPolicy()) as gateway:
        session = await ModelSession.connect(gateway)

        async def worker(n: int) -> None:
            for _ in range(n):
                response = await session.complete(REQUEST)
                assert response.text

        return await _timed(worker, count)


async def through_client(url: str, count: int) -> tuple[float, float]:
    """The spec's client layer (provider routing, local-file inlining) with the usual
    middleware stack (logging, then retries) in front of the same gateway."""
    ep = endpoint("openai_chat", url, "k", max_concurrency=CONCURRENCY)
    stack = [LoggingMiddleware(), RetryMiddleware()]
    async with (
        Runtime() as runtime,
        open_client(runtime, {"local": ep}, default_provider="local", middleware=stack) as client,
    ):

        async def worker(n: int) -> None:
            for _ in range(n):
                response = await client.complete(REQUEST)
                assert response.text

        return await _timed(worker, count)


async def _timed(worker: Callable[[int], Awaitable[None]], count: int) -> tuple[float, float]:
    share = count // CONCURRENCY
    await worker(5)  # warm the pool
    cpu, start = time.process_time(), time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(CONCURRENCY):
            nursery.start_soon(worker, share)
    done = share * CONCURRENCY
    return done / (time.perf_counter() - start), (time.process_time() - cpu) / done


async def stream_events(url: str, count: int) -> float:
    """Unified events per second, end to end, streaming through the gateway."""
    ep = endpoint("anthropic", url, "k", max_concurrency=CONCURRENCY)
    async with Runtime() as runtime, open_gateway(runtime, ep, RetryPolicy()) as gateway:
        session = await ModelSession.connect(gateway)
        events = 0
        start = time.perf_counter()
        for _ in range(count):
            async with session.stream(REQUEST) as stream:
                async for _ in stream:
                    events += 1
        return events / (time.perf_counter() - start)


def parse_rate(wire: str, repeat: int) -> float:
    """Events per second for the SSE parser plus one adapter, on an in-memory body."""
    turn = Turn(text=TEXT, reasoning=TEXT, tool_calls=[ToolCallSpec("f", {"a": TEXT})])
    body = b"".join(WIRES[wire].stream(make_answer(turn, 1, "m", 4)))
    adapter = adapter_for(endpoint(wire, "http://h", "k"))  # type: ignore[arg-type]
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    events = 0
    start = time.perf_counter()
    for _ in range(repeat):
        sse, parser = SSEParser(), adapter.stream_parser()
        for chunk in chunks:
            for event in sse.feed(chunk):
                events += len(parser.feed(event))
        for event in sse.close():
            events += len(parser.feed(event))
        events += len(parser.close())
    return events / (time.perf_counter() - start)


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    requests = 800 if args.quick else 4000
    streams = 50 if args.quick else 300
    repeats = 3 if args.quick else REPEATS
    child, url = start_scripted(Script([Turn(text=TEXT)], delta_size=16))
    try:
        measured: dict[object, list[tuple[float, float]]] = {}
        sides = [raw_httpx, through_gateway, through_client]
        for repeat in range(repeats):  # interleaved, the order rotated each repeat
            turn = repeat % len(sides)
            for side in sides[turn:] + sides[:turn]:
                measured.setdefault(side, []).append(trio.run(side, url, requests))
        raws, gws, clients = (measured[side] for side in sides)
        streamed = trio.run(stream_events, url, streams)
    finally:
        child.terminate()
        child.wait(timeout=10)
    rps_ratios = [g[0] / r[0] for r, g in zip(raws, gws, strict=True)]
    cpu_ratios = [r[1] / g[1] for r, g in zip(raws, gws, strict=True)]
    rps_ratio, cpu_ratio = statistics.median(rps_ratios), statistics.median(cpu_ratios)
    raw = (statistics.median(r[0] for r in raws), statistics.median(r[1] for r in raws))
    gw = (statistics.median(g[0] for g in gws), statistics.median(g[1] for g in gws))
    figures = [
        Figure("raw_httpx_requests_per_s", "raw httpx, requests/s", raw[0], "req/s"),
        Figure("gateway_requests_per_s", "gateway, requests/s", gw[0], "req/s"),
        Figure("requests_ratio_min", "gateway / raw httpx (min)", min(rps_ratios), "x"),
        Figure(
            "requests_ratio",
            "gateway / raw httpx (median)",
            rps_ratio,
            "x",
            ">= 0.8",
            rps_ratio >= 0.8,
        ),
        Figure("raw_httpx_cpu_ms", "raw httpx, client CPU/request", raw[1] * 1000, "ms"),
        Figure("gateway_cpu_ms", "gateway, client CPU/request", gw[1] * 1000, "ms"),
        Figure("cpu_ratio_min", "raw CPU / gateway CPU (min)", min(cpu_ratios), "x"),
        Figure(
            "cpu_ratio",
            "raw CPU / gateway CPU (median)",
            cpu_ratio,
            "x",
            ">= 0.8",
            cpu_ratio >= 0.8,
        ),
        Figure("stream_events_per_s", "streamed events/s, end to end", streamed, "ev/s"),
    ]
    for wire in ("openai_responses", "openai_chat", "anthropic", "gemini"):
        rate = parse_rate(wire, 20 if args.quick else 200)
        figures.append(
            Figure(f"parse_{wire}_events_per_s", f"parse {wire}, events/s", rate, "ev/s")
        )
    client_ratios = [c[0] / r[0] for r, c in zip(raws, clients, strict=True)]
    client_ratio = statistics.median(client_ratios)
    client_cpu = [r[1] / c[1] for r, c in zip(raws, clients, strict=True)]
    figures += [
        Figure(
            "client_requests_per_s",
            "client layer + middleware, requests/s",
            statistics.median(c[0] for c in clients),
            "req/s",
        ),
        Figure("client_ratio_min", "client layer / raw httpx (min)", min(client_ratios), "x"),
        Figure(
            "client_ratio",
            "client layer / raw httpx (median)",
            client_ratio,
            "x",
            ">= 0.8",
            client_ratio >= 0.8,
        ),
        Figure(
            "client_cpu_ratio",
            "raw CPU / client layer CPU (median)",
            statistics.median(client_cpu),
            "x",
            ">= 0.8",
            statistics.median(client_cpu) >= 0.8,
        ),
    ]
    emit("Troupe model layer", figures, args.json)


if __name__ == "__main__":
    main()
