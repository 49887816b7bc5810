"""The client layer with middleware against raw httpx, on the scripted provider.

    python bench/client.py          # a table
    python bench/client.py --json   # one JSON object

``troupe mock-llm`` runs in a child process, so the CPU measured is the client's.
Each repeat runs both sides in turn on the same server (raw httpx posting a prebuilt
Chat Completions body and reading the bytes; then ``Client.complete`` through a
logging, a retry and a counting middleware, a gateway actor's admission, building the
request and parsing the Response), alternating which goes first. Reported: the
ratio client / raw of requests per second, min and median over the repeats.
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.mockllm import Script, Turn
from actors.models.client import LoggingMiddleware, Middleware, RetryMiddleware, open_client
from actors.models.config import endpoint
from actors.models.registry import adapter_for
from actors.models.retry import RetryPolicy
from bench.mock_provider import start_scripted
from bench.report import Figure, emit, parse_args
from protocol.llm import Message, Request, Response

CONCURRENCY = 8
TEXT = "The quick brown fox jumps over the lazy dog. " * 8
REQUEST = Request(
    "mock-model", [Message.system("You are a benchmark."), Message.user("Say something.")]
)


class Counting(Middleware):
    """A custom middleware, as an application would add one (cost tracking)."""

    def __init__(self) -> None:
        self.tokens = 0

    async def complete(self, request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        self.tokens += response.usage.total_tokens
        return response


def quiet_logger() -> logging.Logger:
    """A logger that formats and handles every record, as a real one would, silently."""
    logger = logging.getLogger("bench.client")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


async def _timed(worker: Callable[[int], Awaitable[None]], count: int) -> tuple[float, float]:
    share = count // CONCURRENCY
    await worker(5)  # warm the pool and the code paths alike on both sides
    cpu, start = time.process_time(), time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(CONCURRENCY):
            nursery.start_soon(worker, share)
    done = share * CONCURRENCY
    return done / (time.perf_counter() - start), (time.process_time() - cpu) / done


async def raw_httpx(url: str, count: int) -> tuple[float, float]:
    body = adapter_for(endpoint("openai_chat", url, "k")).build(REQUEST, stream=False).body
    target = f"{url}/v1/chat/completions"
    headers = {"content-type": "application/json", "authorization": "Bearer k"}
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=CONCURRENCY)) as client:

        async def worker(n: int) -> None:
            for _ in range(n):
                response = await client.post(target, content=body, headers=headers)
                assert response.status_code == 200 and response.content

        return await _timed(worker, count)


async def through_client(url: str, count: int) -> tuple[float, float]:
    ep = endpoint("openai_chat", url, "k", max_concurrency=CONCURRENCY)
    middleware = [LoggingMiddleware(quiet_logger()), RetryMiddleware(RetryPolicy()), Counting()]
    async with (
        Runtime() as runtime,
        open_client(runtime, {"local": ep}, default_provider="local", middleware=middleware) as c,
    ):

        async def worker(n: int) -> None:
            for _ in range(n):
                response = await c.complete(REQUEST)
                assert response.text

        return await _timed(worker, count)


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    requests = 400 if args.quick else 2000
    repeats = 3 if args.quick else 7
    child, url = start_scripted(Script([Turn(text=TEXT)], delta_size=16))
    ratios, cpu_ratios, raw_rates, client_rates = [], [], [], []
    try:
        for index in range(repeats):
            sides = [raw_httpx, through_client]
            if index % 2:
                sides.reverse()
            results = {side.__name__: trio.run(side, url, requests) for side in sides}
            raw, ours = results["raw_httpx"], results["through_client"]
            raw_rates.append(raw[0])
            client_rates.append(ours[0])
            ratios.append(ours[0] / raw[0])
            cpu_ratios.append(raw[1] / ours[1])
    finally:
        child.terminate()
        child.wait(timeout=10)
    median = statistics.median(ratios)
    figures = [
        Figure(
            "raw_httpx_requests_per_s",
            "raw httpx, requests/s (median)",
            statistics.median(raw_rates),
            "req/s",
        ),
        Figure(
            "client_requests_per_s",
            "client + 3 middleware, requests/s (median)",
            statistics.median(client_rates),
            "req/s",
        ),
        Figure(
            "client_ratio_median",
            "client / raw httpx, median",
            median,
            "x",
            ">= 0.8",
            median >= 0.8,
        ),
        Figure("client_ratio_min", "client / raw httpx, min", min(ratios), "x"),
        Figure(
            "cpu_ratio_median",
            "raw CPU / client CPU per request, median",
            statistics.median(cpu_ratios),
            "x",
        ),
        Figure("cpu_ratio_min", "raw CPU / client CPU per request, min", min(cpu_ratios), "x"),
    ]
    emit(f"Troupe client layer ({repeats} interleaved repeats)", figures, args.json)


if __name__ == "__main__":
    main()
