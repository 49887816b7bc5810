"""Embedding benchmark: an ask from asyncio through the bridge (RuntimeThread) against
the same ask made inside trio, on the same runtime and actor, in the same run.

    python bench/embed.py          # a table
    python bench/embed.py --json   # one JSON object

Both sides are measured alternately, each REPEATS times after the same warm-up; the
figures are per ask (min and median of the rounds). "Bridge overhead" is asyncio
minus trio. For context, the floor of any thread crossing is shown too: a bare
round trip through ``TrioToken.run_sync_soon`` and ``call_soon_threadsafe``, which
is two thread wake-ups and bounds what any two-thread design can reach. CPU time
per ask (the process's, both threads) is shown as well: unlike wall time it does not
count waiting for a core, so it says what the bridge itself costs on a busy machine.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import msgspec
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.embed import RuntimeThread
from actors.kernel import Actor, handler
from bench.report import Figure, emit, parse_args

REPEATS = 7
CONCURRENT = 64
TARGET_US = 50.0


class Ping(msgspec.Struct, frozen=True):
    n: int


class Echo(Actor):
    @handler
    async def ping(self, message: Ping) -> int:
        return message.n


async def asks_in_trio(ref, count: int) -> float:
    """Seconds for ``count`` sequential asks, timed on the trio thread."""
    started = time.perf_counter()
    for n in range(count):
        await ref.ask(Ping(n))
    return time.perf_counter() - started


async def concurrent_asks_in_trio(ref, count: int) -> float:
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(CONCURRENT):
            nursery.start_soon(asks_in_trio, ref, count // CONCURRENT)
    return time.perf_counter() - started


async def asks_from_asyncio(bridged, count: int) -> float:
    started = time.perf_counter()
    for n in range(count):
        await bridged.ask(Ping(n))
    return time.perf_counter() - started


async def concurrent_asks_from_asyncio(bridged, count: int) -> float:
    started = time.perf_counter()
    await asyncio.gather(
        *(asks_from_asyncio(bridged, count // CONCURRENT) for _ in range(CONCURRENT))
    )
    return time.perf_counter() - started


async def bare_crossings(troupe: RuntimeThread, count: int) -> float:
    """The floor: trio token in, call_soon_threadsafe out, nothing else."""
    token = await troupe.call(_token)
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    for _ in range(count):
        future = loop.create_future()
        token.run_sync_soon(loop.call_soon_threadsafe, future.set_result, None)
        await future
    return time.perf_counter() - started


async def _token() -> trio.lowlevel.TrioToken:
    return trio.lowlevel.current_trio_token()


async def measure(
    count: int, repeats: int = REPEATS, *, concurrent: bool = True
) -> dict[str, list[float]]:
    """Every side once per round, alternating, after one warm-up round (the
    concurrent askers only when ``concurrent``)."""
    rounds: dict[str, list[float]] = {
        key: []
        for key in ("trio", "asyncio", "floor", "trio_many", "asyncio_many", "trio_cpu",
                    "asyncio_cpu")
    }  # fmt: skip
    async with RuntimeThread() as troupe:
        bridged = await troupe.spawn(Echo(), name="echo")
        ref = bridged.ref
        for warm_up in (True, *([False] * repeats)):  # alternate sides, warm both alike
            cpu = time.process_time()
            trio_s = await troupe.call(asks_in_trio, ref, count)
            trio_cpu = time.process_time() - cpu
            cpu = time.process_time()
            asyncio_s = await asks_from_asyncio(bridged, count)
            asyncio_cpu = time.process_time() - cpu
            floor_s = await bare_crossings(troupe, count)
            many = concurrent
            trio_many = await troupe.call(concurrent_asks_in_trio, ref, count) if many else 0.0
            asyncio_many = await concurrent_asks_from_asyncio(bridged, count) if many else 0.0
            if warm_up:
                continue
            rounds["trio"].append(trio_s / count * 1e6)
            rounds["asyncio"].append(asyncio_s / count * 1e6)
            rounds["floor"].append(floor_s / count * 1e6)
            rounds["trio_cpu"].append(trio_cpu / count * 1e6)
            rounds["asyncio_cpu"].append(asyncio_cpu / count * 1e6)
            if many:
                rounds["trio_many"].append(count / trio_many)
                rounds["asyncio_many"].append(count / asyncio_many)
    return rounds


def ask_figures(rounds: dict[str, list[float]]) -> list[Figure]:
    """The sequential-ask figures: trio, asyncio through the bridge, their difference
    (the target), and the bare thread round trip that bounds any two-thread bridge."""
    overhead = [a - t for a, t in zip(rounds["asyncio"], rounds["trio"], strict=True)]
    above_floor = [o - f for o, f in zip(overhead, rounds["floor"], strict=True)]
    median_overhead = statistics.median(overhead)
    return [
        Figure("trio_ask_us_min", "ask inside trio, min", min(rounds["trio"]), "us"),
        Figure("trio_ask_us_median", "ask inside trio, median",
               statistics.median(rounds["trio"]), "us"),
        Figure("asyncio_ask_us_min", "ask from asyncio (bridge), min",
               min(rounds["asyncio"]), "us"),
        Figure("asyncio_ask_us_median", "ask from asyncio (bridge), median",
               statistics.median(rounds["asyncio"]), "us"),
        Figure("bridge_overhead_us_min", "bridge overhead per ask, min", min(overhead), "us"),
        Figure("bridge_overhead_us_median", "bridge overhead per ask, median", median_overhead,
               "us", f"< {TARGET_US:g} us", median_overhead < TARGET_US),
        Figure("bridge_ask_ratio_min", "asyncio ask / trio ask, min",
               min(a / t for a, t in zip(rounds["asyncio"], rounds["trio"], strict=True)), "x"),
        Figure("bridge_ask_ratio", "asyncio ask / trio ask (median)",
               statistics.median(rounds["asyncio"]) / statistics.median(rounds["trio"]), "x"),
        Figure("thread_floor_us_min", "bare thread round trip, min", min(rounds["floor"]), "us"),
        Figure("thread_floor_us_median", "bare thread round trip, median",
               statistics.median(rounds["floor"]), "us"),
        Figure("bridge_above_floor_us_median", "bridge overhead minus the bare round trip, median",
               statistics.median(above_floor), "us"),
    ]  # fmt: skip


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    count = 1_000 if args.quick else 5_000
    rounds = asyncio.run(measure(count))
    many_ratio = statistics.median(rounds["asyncio_many"]) / statistics.median(rounds["trio_many"])
    figures = [
        *ask_figures(rounds),
        Figure("trio_ask_cpu_us_median", "CPU per ask inside trio, median",
               statistics.median(rounds["trio_cpu"]), "us"),
        Figure("asyncio_ask_cpu_us_median", "CPU per ask from asyncio, median",
               statistics.median(rounds["asyncio_cpu"]), "us"),
        Figure("bridge_cpu_overhead_us_median", "bridge CPU per ask, median",
               statistics.median(rounds["asyncio_cpu"]) - statistics.median(rounds["trio_cpu"]),
               "us"),
        Figure("trio_asks_per_s_64", f"{CONCURRENT} concurrent askers in trio, median",
               statistics.median(rounds["trio_many"]), "ask/s"),
        Figure("asyncio_asks_per_s_64", f"{CONCURRENT} concurrent askers from asyncio, median",
               statistics.median(rounds["asyncio_many"]), "ask/s"),
        Figure("concurrent_ratio", "concurrent asyncio / trio throughput", many_ratio, "x"),
    ]  # fmt: skip
    emit("Troupe embedding: asyncio through the bridge vs trio", figures, args.json)


if __name__ == "__main__":
    main()
