"""Concurrent handlers, typed rejections, and cancelling abandoned requests."""

from __future__ import annotations

import msgspec
import pytest
import trio
import trio.testing

from actors.kernel import Actor, AskTimeoutError, Rejection, Runtime, handler
from protocol.supervision import ChildFailed

HANG_GUARD = 10


class Work(msgspec.Struct, frozen=True):
    key: str


class Refuse(msgspec.Struct, frozen=True):
    reason: str


class Crash(msgspec.Struct, frozen=True):
    pass


class NoSuchThing(Rejection):
    code = "no_such_thing"


class Worker(Actor):
    """Each Work waits on its own gate, so progress shows what runs at the same time."""

    def __init__(self) -> None:
        self.gates: dict[str, trio.Event] = {}
        self.started: list[str] = []
        self.cancelled: list[str] = []

    @handler(concurrent=True)
    async def work(self, message: Work) -> str:
        self.started.append(message.key)
        gate = self.gates.setdefault(message.key, trio.Event())
        try:
            await gate.wait()
        except trio.Cancelled:
            self.cancelled.append(message.key)
            raise
        return message.key.upper()

    @handler(concurrent=True)
    async def refuse(self, message: Refuse) -> None:
        raise NoSuchThing(message.reason)

    @handler(concurrent=True)
    async def crash(self, message: Crash) -> None:
        raise ValueError("bug in a concurrent handler")


async def test_concurrent_requests_run_at_the_same_time_and_answer_their_own_askers() -> None:
    worker = Worker()
    results: dict[str, str] = {}
    async with Runtime() as rt:
        ref = await rt.spawn(worker)

        async def ask(key: str) -> None:
            results[key] = await ref.ask(Work(key))

        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                for key in ("a", "b", "c"):
                    nursery.start_soon(ask, key)
                await trio.testing.wait_all_tasks_blocked()
                assert sorted(worker.started) == ["a", "b", "c"]
                for key in ("c", "a", "b"):
                    worker.gates[key].set()
    assert results == {"a": "A", "b": "B", "c": "C"}


async def test_abandoned_request_cancels_its_work_and_the_actor_carries_on() -> None:
    worker = Worker()
    async with Runtime() as rt:
        ref = await rt.spawn(worker)
        with pytest.raises(AskTimeoutError):
            await ref.ask(Work("slow"), timeout=0.05)
        with trio.CancelScope() as caller:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ref.ask, Work("aborted"))
                await trio.testing.wait_all_tasks_blocked()
                caller.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert worker.cancelled == ["slow", "aborted"]
        worker.gates["fine"] = trio.Event()
        worker.gates["fine"].set()
        assert await ref.ask(Work("fine")) == "FINE"


async def test_rejection_reaches_the_asker_as_itself_and_leaves_the_actor_running() -> None:
    async with Runtime() as rt:
        ref = await rt.spawn(Worker())
        with pytest.raises(NoSuchThing, match="not here"):
            await ref.ask(Refuse("not here"))
        assert ref.alive
        await ref.tell(Refuse("nobody is asking"))  # logged, not fatal
        with pytest.raises(NoSuchThing):
            await ref.ask(Refuse("still answering"))


async def test_failure_in_a_concurrent_handler_fails_the_actor_and_is_reported() -> None:
    async with Runtime() as rt:
        ref = await rt.spawn(Worker(), name="worker")
        await ref.tell(Crash())
        with trio.fail_after(HANG_GUARD):
            await ref.wait_stopped()
        assert list(rt.root_exits) == [
            ChildFailed("/worker", "ValueError", "bug in a concurrent handler")
        ]
