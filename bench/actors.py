"""Actor kernel benchmark: tell and ask throughput against raw trio memory channels,
the cost of spawning and shutting down 10,000 actors, and an ask from asyncio through
the embedding bridge against the same ask inside trio (``bench/embed.py`` has more).

    python bench/actors.py          # a table
    python bench/actors.py --json   # one JSON object

Every speed is also given as a ratio to a raw channel measured in the same run, so
the figures compare across machines; the sides alternate and repeat after a
warm-up, and each figure gives the min and the median.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import tracemalloc
from pathlib import Path

import msgspec
import trio
import trio.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Actor, Runtime, handler
from bench.embed import ask_figures
from bench.embed import measure as measure_bridge
from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures

MAILBOX = 64
REPEATS = 5


class Ping(msgspec.Struct, frozen=True):
    n: int


class Sink(Actor):
    mailbox_size = MAILBOX

    def __init__(self, expected: int, finished: trio.Event) -> None:
        self.remaining = expected
        self.finished = finished

    @handler
    async def ping(self, message: Ping) -> int:
        self.remaining -= 1
        if self.remaining == 0:
            self.finished.set()
        return message.n


class Idle(Actor):
    @handler
    async def ping(self, message: Ping) -> None:
        pass


async def raw_channel_rate(count: int) -> float:
    send, receive = trio.open_memory_channel[Ping](MAILBOX)
    message = Ping(1)

    async def consume() -> None:
        async for _ in receive:
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        start = time.perf_counter()
        async with send:
            for _ in range(count):
                await send.send(message)
    return count / (time.perf_counter() - start)


async def tell_rate(count: int) -> float:
    finished = trio.Event()
    async with Runtime() as runtime:
        ref = await runtime.spawn(Sink(count, finished))
        message = Ping(1)
        start = time.perf_counter()
        for _ in range(count):
            await ref.tell(message)
        await finished.wait()
        return count / (time.perf_counter() - start)


async def raw_round_trip_rate(count: int) -> float:
    requests, serve = trio.open_memory_channel[tuple[Ping, trio.Event]](MAILBOX)

    async def server() -> None:
        async for _, done in serve:
            done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        start = time.perf_counter()
        async with requests:
            for n in range(count):
                done = trio.Event()
                await requests.send((Ping(n), done))
                await done.wait()
    return count / (time.perf_counter() - start)


async def ask_rate(count: int) -> float:
    async with Runtime() as runtime:
        ref = await runtime.spawn(Sink(count, trio.Event()))
        start = time.perf_counter()
        for n in range(count):
            await ref.ask(Ping(n))
        return count / (time.perf_counter() - start)


async def spawn_and_shutdown(count: int) -> tuple[float, float]:
    start = time.perf_counter()
    async with Runtime() as runtime:
        for _ in range(count):
            await runtime.spawn(Idle())
        spawned = time.perf_counter()
    return spawned - start, time.perf_counter() - spawned


async def bytes_per_idle_actor(count: int) -> float:
    async with Runtime() as runtime:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(count):
            await runtime.spawn(Idle())
        await trio.testing.wait_all_tasks_blocked()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return (after - before) / count


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    messages = 20_000 if args.quick else 200_000
    asks = 5_000 if args.quick else 50_000
    actors = 10_000

    rates = compare(
        {
            "raw_tell": lambda: trio.run(raw_channel_rate, messages),
            "tell": lambda: trio.run(tell_rate, messages),
            "raw_ask": lambda: trio.run(raw_round_trip_rate, asks),
            "ask": lambda: trio.run(ask_rate, asks),
        },
        REPEATS,
    )
    tell_ratios = ratios(rates["tell"], rates["raw_tell"])
    ask_ratios = ratios(rates["ask"], rates["raw_ask"])
    spawn_s, shutdown_s = min(
        (trio.run(spawn_and_shutdown, actors) for _ in range(REPEATS)), key=sum
    )
    per_actor = trio.run(bytes_per_idle_actor, actors)
    bridge = asyncio.run(measure_bridge(1_000 if args.quick else 5_000, REPEATS, concurrent=False))

    tell_ratio = tell_ratios.median
    figures = [
        Figure("repeats", "repeats per side (alternating, after a warm-up)", REPEATS, ""),
        *sample_figures(
            "raw_channel_msgs_per_s", "raw trio channel, messages/s", rates["raw_tell"], "msg/s"
        ),
        *sample_figures("tell_msgs_per_s", "tell, messages/s", rates["tell"], "msg/s"),
        Figure("tell_ratio_min", "tell / raw channel (min)", tell_ratios.min, "x"),
        Figure(
            "tell_ratio",
            "tell / raw channel (median)",
            tell_ratio,
            "x",
            ">= 0.5",
            tell_ratio >= 0.5,
        ),
        *sample_figures(
            "raw_round_trips_per_s", "raw channel round trips/s", rates["raw_ask"], "rt/s"
        ),
        *sample_figures("ask_round_trips_per_s", "ask round trips/s", rates["ask"], "rt/s"),
        *sample_figures("ask_ratio", "ask / raw round trip", ask_ratios, "x"),
        Figure("spawn_10k_s", "spawn 10,000 actors", spawn_s, "s"),
        Figure("shutdown_10k_s", "shut down 10,000 actors", shutdown_s, "s"),
        Figure(
            "spawn_and_shutdown_10k_s",
            "spawn + shut down 10,000",
            spawn_s + shutdown_s,
            "s",
            "< 2 s",
            spawn_s + shutdown_s < 2.0,
        ),
        Figure(
            "bytes_per_idle_actor",
            "memory per idle actor",
            per_actor,
            "B",
            "< 10,240 B",
            per_actor < 10_240,
        ),
        *ask_figures(bridge),
    ]
    emit("Troupe actor kernel", figures, args.json)


if __name__ == "__main__":
    main()
