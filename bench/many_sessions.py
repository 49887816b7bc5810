"""Many short sessions at once: the fixed cost of a round (issue #36).

    python bench/many_sessions.py          # a table (also part of bench/loop.py)
    python bench/many_sessions.py --quick  # fewer sessions and repeats

``SESSIONS`` real sessions (one runtime, one gateway, one local environment, the
OpenAI Responses wire) each do ``ROUNDS`` tool rounds of a trivial tool, all at
once, against the scripted provider in another process; and the same number of
raw loops (httpx + ``json`` on trio, one shared client, no Troupe) do the same
rounds at the same concurrency, from the same first request. Histories stay
short, so what a round costs beyond its history is what is measured. Both ways,
in the same run: streamed (Server-Sent Events, as Troupe asks by default) and
not (one JSON answer per request: a profile without streaming, and a raw loop
that sends ``"stream": false``).

Each side runs in a fresh interpreter (``--side``), alternating, so that one side's
heap does not count against the other: client CPU of the rounds (``process_time``)
per round, and memory growth: the peak resident set during the rounds less the
resident set just before them (modules imported, first request made).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import Figure, emit, parse_args

SESSIONS, ROUNDS = 50, 20
WIRE = "openai_responses"


def _rss() -> int:
    """The resident set now, in bytes."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize()


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def _sessions(
    url: str, workdir: Path, sessions: int, stream: bool
) -> tuple[float, float, int]:
    from actors.kernel import Runtime
    from actors.models import RetryPolicy, open_gateway
    from actors.models.config import endpoint
    from actors.session.actor import SessionActor
    from bench.loop import PROMPT, _profile
    from environments.local import LocalEnvironment
    from protocol.session import SessionConfig, Submit, WaitIdle

    async with Runtime() as runtime:
        ep = endpoint(WIRE, url, "bench-key", max_concurrency=sessions)
        async with open_gateway(runtime, ep, RetryPolicy(max_retries=0)) as gateway:
            env = await runtime.spawn(LocalEnvironment(workdir))
            # No workspace snapshots: the raw loops keep none (bench/snapshots.py).
            config = SessionConfig(enable_loop_detection=False, snapshots=False)
            profile = _profile(WIRE)
            profile.supports_streaming = stream
            refs = [
                await runtime.spawn(SessionActor(profile, env, gateway, config))
                for _ in range(sessions)
            ]
            before = _rss()
            wall, cpu = time.perf_counter(), time.process_time()
            async with trio.open_nursery() as nursery:
                for ref in refs:

                    async def one(ref: Any = ref) -> None:
                        await ref.tell(Submit(PROMPT))
                        await ref.ask(WaitIdle(), timeout=None)

                    nursery.start_soon(one)
            return time.perf_counter() - wall, time.process_time() - cpu, before


async def _raw(url: str, workdir: Path, sessions: int, stream: bool) -> tuple[float, float, int]:
    from bench.loop import RAW, _read_events, first_request

    path, first = await first_request(WIRE, workdir)
    first = {**first, "stream": stream}
    key = RAW[WIRE]().history_key
    headers = {"authorization": "Bearer bench-key"}
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits) as client:

        async def loop() -> None:
            history = list(first[key])
            while True:
                reader = RAW[WIRE]()
                body = {**first, key: history}
                if stream:
                    async with client.stream("POST", path, json=body) as response:
                        await _read_events(WIRE, response, reader)
                else:
                    answer = (await client.post(path, json=body)).json()
                    for item in answer["output"]:  # the items a stream's events carry
                        reader.read({"type": "response.output_item.done", "item": item})
                if not reader.answer(history):
                    return

        before = _rss()
        wall, cpu = time.perf_counter(), time.process_time()
        async with trio.open_nursery() as nursery:
            for _ in range(sessions):
                nursery.start_soon(loop)
        return time.perf_counter() - wall, time.process_time() - cpu, before


def side(name: str, url: str, sessions: int, stream: bool) -> None:
    """One side in this process; prints its figures as one JSON line."""
    with tempfile.TemporaryDirectory() as directory:
        run = _sessions if name == "session" else _raw
        wall, cpu, before = trio.run(run, url, Path(directory), sessions, stream)
    print(json.dumps({"wall": wall, "cpu": cpu, "growth": _peak() - before}))


def _child(name: str, url: str, sessions: int, stream: bool) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--side", name, url, str(sessions), str(int(stream))],
        capture_output=True, check=True, text=True, timeout=600,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def figures(sessions: int, rounds: int, repeats: int) -> list[Figure]:
    """Both sides, alternated, in fresh processes, against one scripted provider:
    streamed, then not."""
    from bench.mock_provider import start_mock_llm

    process, url = start_mock_llm("--rounds", str(rounds))
    found: list[Figure] = []
    try:
        for stream in (True, False):
            got: dict[str, list[dict[str, float]]] = {"session": [], "raw": []}
            for name in ("raw", "session"):  # warm-up
                _child(name, url, sessions, stream)
            for repeat in range(repeats):
                for name in ("raw", "session") if repeat % 2 == 0 else ("session", "raw"):
                    got[name].append(_child(name, url, sessions, stream))
            found += _figures(got, sessions, rounds, stream)
    finally:
        process.terminate()
        process.wait()
    return found


def _figures(
    got: dict[str, list[dict[str, float]]], sessions: int, rounds: int, stream: bool
) -> list[Figure]:
    total = sessions * rounds
    way = "streamed" if stream else "not streamed"
    label = f"{sessions} sessions x {rounds} rounds at once, {way}"
    key = "concurrent" if stream else "concurrent_plain"

    def median(name: str, key: str) -> float:
        return statistics.median(sample[key] for sample in got[name])

    cpu = [s["cpu"] / r["cpu"] for s, r in zip(got["session"], got["raw"], strict=True)]
    growth = median("session", "growth") / max(median("raw", "growth"), 1)
    return [
        Figure(f"{key}_session_cpu_ms", f"{label}: session CPU / round (median)",
               median("session", "cpu") * 1000 / total, "ms"),
        Figure(f"{key}_raw_cpu_ms", f"{label}: raw loop CPU / round (median)",
               median("raw", "cpu") * 1000 / total, "ms"),
        Figure(f"{key}_cpu_ratio_median", f"{label}: session / raw CPU (median)",
               statistics.median(cpu), "x", "<= 1.3", statistics.median(cpu) <= 1.3),
        Figure(f"{key}_session_growth_mb", f"{label}: session memory growth (median)",
               median("session", "growth") / 1e6, "MB"),
        Figure(f"{key}_raw_growth_mb", f"{label}: raw loop memory growth (median)",
               median("raw", "growth") / 1e6, "MB"),
        Figure(f"{key}_growth_ratio", f"{label}: session / raw memory growth",
               growth, "x", "<= 2", growth <= 2),
        Figure(f"{key}_wall_ratio_median", f"{label}: session / raw wall (median)",
               median("session", "wall") / median("raw", "wall"), "x"),
    ]  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--side":
        side(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1")
        return
    args = parse_args(__doc__ or "")
    sessions, rounds, repeats = (20, 10, 2) if args.quick else (SESSIONS, ROUNDS, 5)
    emit("many short sessions at once", figures(sessions, rounds, repeats), args.json)


if __name__ == "__main__":
    main()
