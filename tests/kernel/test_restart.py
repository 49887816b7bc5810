"""Restart policies (one-for-one): a failed service actor is started again in place,
with its state, its address and the refs others hold; siblings are untouched."""

from __future__ import annotations

import msgspec
import pytest
import trio

from actors.kernel import Actor, ActorFailedError, RestartPolicy, Runtime, handler
from protocol.supervision import ChildFailed, ChildRestarted
from tests.kernel.sample_actors import Add, Boom, Parent, Recorder, Total

HANG_GUARD = 10


class Crash(msgspec.Struct, frozen=True):
    """Fails a concurrent handler (the actor's nursery is cancelled)."""


class Starts(msgspec.Struct, frozen=True):
    pass


class Service(Recorder):
    """A Recorder that counts its starts and can fail from a concurrent handler."""

    restart_policy = RestartPolicy(max_restarts=3, within=60)

    def __init__(self) -> None:
        super().__init__()
        self.starts = 0
        self.failures: list[str] = []

    async def on_start(self) -> None:
        self.starts += 1

    async def on_failure(self, error: Exception) -> None:
        self.failures.append(str(error))

    @handler(concurrent=True)
    async def crash(self, message: Crash) -> None:
        raise OSError("disk on fire")

    @handler
    async def count_starts(self, message: Starts) -> int:
        return self.starts


async def test_a_failed_service_restarts_in_place_with_its_state() -> None:
    async with Runtime() as rt:
        seen: list[ChildRestarted] = []
        rt.watch_restarts(seen.append)
        service = Service()
        ref = await rt.spawn(service, name="environments/local")
        await ref.tell(Add(4))
        with pytest.raises(ActorFailedError):
            await ref.ask(Boom("bad request"))
        with trio.fail_after(HANG_GUARD):
            assert await ref.ask(Total()) == 4  # same ref, same state
            with pytest.raises(ActorFailedError):
                await ref.ask(Crash())
            await ref.tell(Add(1))
            assert await ref.ask(Total()) == 5
        assert await ref.ask(Starts()) == 3
        assert ref.alive and rt.addresses() == ["/environments/local"]
        assert [n.error_type for n in seen] == ["RuntimeError", "OSError"]
        assert [n.restarts for n in seen] == [1, 2]
        assert service.failures == ["bad request", "disk on fire"]


async def test_the_parent_hears_of_the_restart_and_siblings_are_untouched() -> None:
    class Watching(Parent):
        @handler
        async def on_child_restarted(self, message: ChildRestarted) -> None:
            self.notices.append(message)  # type: ignore[arg-type]
            self.notified.set()

    async with Runtime() as rt:
        parent = Watching()
        await rt.spawn(parent, name="environments/ssh")
        sibling = await parent.ctx.spawn(Recorder(), name="other")
        await sibling.tell(Add(7))
        child = await parent.ctx.spawn(Recorder(), name="box", restart=RestartPolicy())
        await child.tell(Boom("x"))
        with trio.fail_after(HANG_GUARD):
            await parent.notified.wait()
            assert await child.ask(Total()) == 0
        assert parent.notices == [ChildRestarted("/environments/ssh/box", "RuntimeError", "x", 1)]
        assert await sibling.ask(Total()) == 7


async def test_too_many_restarts_give_up_and_report_the_failure() -> None:
    async with Runtime() as rt:
        parent = Parent()
        await rt.spawn(parent)
        child = await parent.ctx.spawn(
            Recorder(), name="flaky", restart=RestartPolicy(max_restarts=2, within=60)
        )
        with trio.fail_after(HANG_GUARD):
            for _ in range(3):
                await child.tell(Boom("again"))
            await parent.notified.wait()
            await child.wait_stopped()
        assert parent.notices == [ChildFailed(child.address, "RuntimeError", "again")]


async def test_a_stop_is_not_a_failure_and_does_not_restart() -> None:
    async with Runtime() as rt:
        service = Service()
        ref = await rt.spawn(service, name="svc")
        await rt.stop(ref)
        assert not ref.alive
        assert service.starts == 1


class FailsOnce(Actor):
    """Without a restart policy a failure is final, but on_failure still runs."""

    def __init__(self) -> None:
        self.told: list[str] = []

    async def on_failure(self, error: Exception) -> None:
        self.told.append(type(error).__name__)

    @handler
    async def boom(self, message: Boom) -> None:
        raise ValueError(message.text)


async def test_on_failure_runs_before_the_failure_is_reported() -> None:
    async with Runtime() as rt:
        actor = FailsOnce()
        ref = await rt.spawn(actor)
        await ref.tell(Boom())
        with trio.fail_after(HANG_GUARD):
            await ref.wait_stopped()
        assert actor.told == ["ValueError"]
        assert isinstance(rt.root_exits[-1], ChildFailed)


class Bridge(Actor):
    """A service that owns a child and starts it again whenever it starts."""

    restart_policy = RestartPolicy()

    async def on_start(self) -> None:
        await self.ctx.spawn(Recorder(), name="host")

    @handler
    async def boom(self, message: Boom) -> None:
        raise RuntimeError(message.text)

    @handler
    async def total(self, message: Total) -> int:
        return 0


async def test_refs_to_children_of_a_restarted_service_reach_the_new_child() -> None:
    async with Runtime() as rt:
        await rt.spawn(Bridge(), name="environments/ssh")
        old = rt.ref("/environments/ssh/host")
        await old.tell(Add(3))
        bridge = rt.ref("/environments/ssh")
        with trio.fail_after(HANG_GUARD):
            with pytest.raises(ActorFailedError):
                await bridge.ask(Boom("bridge down"))
            await bridge.ask(Total())  # answered once the restarted on_start is done
            assert [n.address for n in rt.restarts] == ["/environments/ssh"]
            assert old.alive
            assert await old.ask(Total()) == 0  # the new child: its state is its own
        await rt.stop(old)
        assert not old.alive  # a deliberate stop is final
