"""The supervision tree: failure isolation, depth limits, addresses, spawn errors."""

from __future__ import annotations

import pytest
import trio

from actors.kernel import (
    Actor,
    AddressInUseError,
    DepthLimitError,
    Runtime,
    SpawnError,
    StoppingError,
    UnknownAddressError,
)
from protocol.supervision import ChildFailed, ChildStopped
from tests.kernel.sample_actors import Add, Boom, Parent, Recorder, Total

HANG_GUARD = 10


async def test_failing_child_is_reported_to_its_parent_and_harms_no_one_else() -> None:
    async with Runtime() as rt:
        parent_actor = Parent()
        parent = await rt.spawn(parent_actor, name="sessions/s-1")
        failing = await parent_actor.ctx.spawn(Recorder(), name="agents/a-1")
        sibling = await parent_actor.ctx.spawn(Recorder(), name="agents/a-2")
        await sibling.tell(Add(5))

        await failing.tell(Boom("tool exploded"))
        with trio.fail_after(HANG_GUARD):
            await parent_actor.notified.wait()

        assert parent_actor.notices == [
            ChildFailed("/sessions/s-1/agents/a-1", "RuntimeError", "tool exploded")
        ]
        assert not failing.alive
        assert await sibling.ask(Total()) == 5
        await parent.tell(Add(2))
        assert await parent.ask(Total()) == 2
        assert rt.addresses() == ["/sessions/s-1", "/sessions/s-1/agents/a-2"]


async def test_parent_that_asks_for_it_hears_of_a_normal_stop() -> None:
    async with Runtime() as rt:
        parent_actor = Parent()
        await rt.spawn(parent_actor)
        child = await parent_actor.ctx.spawn(Recorder())
        await parent_actor.ctx.stop(child)
        with trio.fail_after(HANG_GUARD):
            await parent_actor.notified.wait()
        assert parent_actor.notices == [ChildStopped(child.address)]


async def test_failing_top_level_actor_is_recorded_by_the_runtime() -> None:
    async with Runtime() as rt:
        doomed = await rt.spawn(Recorder(), name="doomed")
        survivor = await rt.spawn(Recorder(), name="survivor")
        await doomed.tell(Boom())
        with trio.fail_after(HANG_GUARD):
            await doomed.wait_stopped()
        assert list(rt.root_exits) == [ChildFailed("/doomed", "RuntimeError", "boom")]
        await survivor.tell(Add(1))
        assert await survivor.ask(Total()) == 1


async def test_runtime_depth_limit_is_enforced_at_spawn() -> None:
    async with Runtime(max_depth=3) as rt:
        level1 = Recorder()
        await rt.spawn(level1)
        level2 = Recorder()
        await level1.ctx.spawn(level2)
        level3 = Recorder()
        await level2.ctx.spawn(level3)
        assert level3.ctx.depth == 3
        with pytest.raises(DepthLimitError) as caught:
            await level3.ctx.spawn(Recorder(), name="too-deep")
        assert (caught.value.depth, caught.value.limit) == (4, 3)
        with pytest.raises(UnknownAddressError):
            rt.ref(f"{level3.ctx.address}/too-deep")


async def test_subtree_depth_limit_holds_at_every_level_and_cannot_be_loosened() -> None:
    async with Runtime(max_depth=10) as rt:
        session = Recorder()
        await rt.spawn(session, name="sessions/s-1", depth_limit=1)
        agent = Recorder()
        # The child asks for more room than its parent has; the parent's limit wins.
        await session.ctx.spawn(agent, name="agents/a-1", depth_limit=5)
        with pytest.raises(DepthLimitError):
            await agent.ctx.spawn(Recorder())
        # A sibling at the same level is still allowed.
        await session.ctx.spawn(Recorder(), name="agents/a-2")


async def test_address_in_use_is_refused() -> None:
    async with Runtime() as rt:
        await rt.spawn(Recorder(), name="environments/local")
        with pytest.raises(AddressInUseError):
            await rt.spawn(Recorder(), name="environments/local")


class FailsToStart(Actor):
    async def on_start(self) -> None:
        raise OSError("no such host")


async def test_on_start_failure_surfaces_in_the_spawner_and_leaves_no_address() -> None:
    async with Runtime() as rt:
        with pytest.raises(SpawnError, match="no such host"):
            await rt.spawn(FailsToStart(), name="ssh-box")
        with pytest.raises(UnknownAddressError):
            rt.ref("/ssh-box")
        assert not rt.root_exits


async def test_spawn_after_shutdown_is_refused() -> None:
    rt = Runtime()
    async with rt:
        pass
    with pytest.raises(StoppingError):
        await rt.spawn(Recorder())
