"""The actor kernel from asyncio: a RuntimeThread opened on an asyncio loop, real
actors on its trio thread, and real processes for the shutdown ladder."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest
import trio

from actors import Actor, handler
from actors.embed import RuntimeThread
from actors.kernel import (
    AskTimeoutError,
    DeadActorError,
    Rejection,
    StoppingError,
    UnhandledMessageError,
)
from tests.embed.conftest import HANG_GUARD, running_in_group
from tests.kernel.sample_actors import Add, Boom, Hang, Received, Recorder, Total, Unknown

T = TypeVar("T")

LADDER_GRACE = 0.2
"""Seconds the shutdown ladder gives actors before cancelling them (5 s by
default): the actors here never end on their own, so the grace is only waited."""


class Slow(msgspec.Struct, frozen=True):
    pass


class WaitStarted(msgspec.Struct, frozen=True):
    pass


class WasCancelled(msgspec.Struct, frozen=True):
    pass


class Refuse(msgspec.Struct, frozen=True):
    pass


class StartSleeper(msgspec.Struct, frozen=True):
    pass


class NotHere(Rejection):
    code = "not_here"


class Worker(Actor):
    """Concurrent work that notices being cancelled, and a process it owns."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.cancelled = False

    @handler(concurrent=True)
    async def slow(self, message: Slow) -> None:
        self.started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            self.cancelled = True
            raise

    @handler(concurrent=True)
    async def wait_started(self, message: WaitStarted) -> None:
        await self.started.wait()

    @handler
    async def was_cancelled(self, message: WasCancelled) -> bool:
        return self.cancelled

    @handler
    async def refuse(self, message: Refuse) -> None:
        raise NotHere("nothing here")

    @handler
    async def start_sleeper(self, message: StartSleeper) -> int:
        ready = trio.Event()
        pid: list[int] = []

        async def own() -> None:
            async with self.ctx.owned_process(["sleep", "60"]) as process:
                pid.append(process.pid)
                ready.set()
                await trio.sleep_forever()

        self.ctx.nursery.start_soon(own)
        await ready.wait()
        return pid[0]


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, HANG_GUARD))


def test_spawn_tell_ask_from_asyncio() -> None:
    async def main() -> tuple[int, list[str]]:
        async with RuntimeThread() as troupe:
            counter = await troupe.spawn(Recorder(), name="counters/c-1")
            for value in range(1, 101):
                await counter.tell(Add(value))
            same = await troupe.ref("/counters/c-1")
            return await same.ask(Total(), timeout=5), await troupe.addresses()

    total, addresses = run(main())
    assert total == 5050
    assert "/counters/c-1" in addresses


def test_errors_arrive_as_themselves() -> None:
    async def main() -> None:
        # The Hang handler never returns: the ladder at the end waits out the grace.
        async with RuntimeThread(grace=LADDER_GRACE) as troupe:
            worker = await troupe.spawn(Worker())
            with pytest.raises(NotHere, match="nothing here"):
                await worker.ask(Refuse())
            with pytest.raises(UnhandledMessageError):
                await worker.tell(Unknown())
            recorder = await troupe.spawn(Recorder())
            with pytest.raises(AskTimeoutError):
                await recorder.ask(Hang(), timeout=0.2)

            async def group_of_one() -> None:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_raise_key_error)

            with pytest.raises(KeyError, match="the trio side's bug"):
                await troupe.call(group_of_one)
            failing = await troupe.spawn(Recorder())
            with pytest.raises(Exception, match="boom") as failed:
                await failing.ask(Boom())
            assert not isinstance(failed.value, BaseExceptionGroup)
            with pytest.raises(DeadActorError):
                await failing.tell(Add(1))

    run(main())


async def _raise_key_error() -> None:
    raise KeyError("the trio side's bug")


def test_cancelling_the_asyncio_caller_cancels_the_trio_work() -> None:
    async def main() -> tuple[bool, bool]:
        async with RuntimeThread() as troupe:
            worker = await troupe.spawn(Worker())
            asking = asyncio.create_task(worker.ask(Slow(), timeout=None))
            await worker.ask(WaitStarted())
            asking.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asking
            await asyncio.sleep(0)
            for _ in range(200):  # the cancellation crosses to trio asynchronously
                if await worker.ask(WasCancelled()):
                    break
                await asyncio.sleep(0.01)
            by_cancel = await worker.ask(WasCancelled())

            other = await troupe.spawn(Worker())
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(other.ask(Slow(), timeout=None), 0.2)
            for _ in range(200):
                if await other.ask(WasCancelled()):
                    break
                await asyncio.sleep(0.01)
            return by_cancel, await other.ask(WasCancelled())

    assert run(main()) == (True, True)


def test_a_missed_ask_deadline_cancels_the_trio_work() -> None:
    async def main() -> bool:
        async with RuntimeThread() as troupe:
            worker = await troupe.spawn(Worker())
            with pytest.raises(AskTimeoutError):
                await worker.ask(Slow(), timeout=0.2)
            for _ in range(200):  # the abandonment crosses to trio asynchronously
                if await worker.ask(WasCancelled()):
                    break
                await asyncio.sleep(0.01)
            return await worker.ask(WasCancelled())

    assert run(main()) is True


def test_a_full_mailbox_holds_asyncio_senders_back_then_takes_them_all() -> None:
    async def main() -> tuple[int, list[int], int]:
        async with RuntimeThread() as troupe:
            gate = trio.Event()
            recorder = await troupe.spawn(Recorder(mailbox_size=1, gate=gate))
            telling = [asyncio.create_task(recorder.tell(Add(n))) for n in range(1, 11)]
            asking = asyncio.create_task(recorder.ask(Total(), timeout=None))
            for _ in range(20):  # give every sender the chance to get through
                await asyncio.sleep(0.01)
            through_while_closed = sum(task.done() for task in telling)

            async def open_gate() -> None:
                gate.set()

            await troupe.call(open_gate)
            await asyncio.gather(*telling)
            total = await asking
            return through_while_closed, sorted(await recorder.ask(Received())), total

    through, values, total = run(main())
    assert through <= 2  # one in the handler, one in the mailbox of size 1
    assert values == list(range(1, 11))
    assert 0 <= total <= 55


def test_leaving_the_block_runs_the_ladder() -> None:
    async def main() -> tuple[int, object]:
        async with RuntimeThread(grace=LADDER_GRACE) as troupe:
            worker = await troupe.spawn(Worker(), name="owner")
            pid = await worker.ask(StartSleeper())
            assert running_in_group(pid) == [pid]
        with pytest.raises(StoppingError):
            await worker.ask(WasCancelled())
        return pid, troupe.running

    pid, running = run(main())
    assert running_in_group(pid) == []
    assert running is False
    assert not [t for t in threading.enumerate() if t.name == "troupe-runtime"]


def test_a_cancelled_host_still_shuts_the_runtime_down() -> None:
    pids: list[int] = []

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.0), RuntimeThread(grace=LADDER_GRACE) as troupe:
                worker = await troupe.spawn(Worker())
                pids.append(await worker.ask(StartSleeper()))
                await asyncio.sleep(60)

    run(main())
    assert running_in_group(pids[0]) == []


def test_the_hosts_own_error_propagates_after_the_ladder() -> None:
    pids: list[int] = []

    async def main() -> None:
        async with RuntimeThread(grace=LADDER_GRACE) as troupe:
            worker = await troupe.spawn(Worker())
            pids.append(await worker.ask(StartSleeper()))
            raise LookupError("the host's bug")

    with pytest.raises(LookupError, match="the host's bug"):
        run(main())
    assert running_in_group(pids[0]) == []


def test_calls_from_another_loop_in_another_thread() -> None:
    results: list[int] = []

    async def main() -> int:
        async with RuntimeThread() as troupe:
            counter = await troupe.spawn(Recorder())

            async def elsewhere() -> None:
                await counter.tell(Add(2))
                results.append(await counter.ask(Total()))

            thread = threading.Thread(target=lambda: asyncio.run(elsewhere()))
            thread.start()
            while thread.is_alive():
                await counter.tell(Add(0))  # this loop keeps working meanwhile
                await asyncio.sleep(0.01)
            thread.join()
            return await counter.ask(Total())

    assert run(main()) == 2
    assert results == [2]


def test_streams_cross_in_order_and_leaving_early_closes_them(tmp_path: Path) -> None:
    closed = trio.Event()

    async def numbers(count: int):
        async def generate():
            try:
                for number in range(count):
                    yield number
            finally:
                closed.set()

        return generate()

    async def main() -> tuple[list[int], list[int]]:
        async with RuntimeThread() as troupe:
            everything = [number async for number in troupe.stream(numbers, 5000)]
            first: list[int] = []
            async for number in troupe.stream(numbers, 10**9):
                first.append(number)
                if len(first) == 3:
                    break
            await troupe.call(closed.wait)
            return everything, first

    everything, first = run(main())
    assert everything == list(range(5000))
    assert first == [0, 1, 2]


def test_a_host_that_never_leaves_the_block_still_gets_the_ladder() -> None:
    async def main() -> int:
        forgotten = RuntimeThread(grace=LADDER_GRACE, thread_name="troupe-forgotten")
        troupe = await forgotten.__aenter__()
        worker = await troupe.spawn(Worker())
        return await worker.ask(StartSleeper())  # and asyncio.run ends, block still open

    pid = run(main())
    for thread in threading.enumerate():
        if thread.name == "troupe-forgotten":
            thread.join(HANG_GUARD)
    assert running_in_group(pid) == []
