"""The shutdown ladder: order, grace periods, and process groups ended on the host."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import trio

from actors.kernel import KILL_GRACE, Actor, Runtime, handler
from tests.kernel.host_processes import running_in_group
from tests.kernel.sample_actors import StopLog, Stubborn
from tests.waiting import TEST_KILL_GRACE, wait_for_file, wait_until

HANG_GUARD = 15

# The leader traps SIGTERM (writes a marker and carries on); its background child
# ignores SIGTERM altogether. Only SIGKILL to the whole group ends them both.
STUBBORN_COMMAND = r"""
( trap '' TERM; exec sleep 600 ) &
echo $! > child.pid
trap 'echo term >> term.log' TERM
echo ready > ready
while true; do sleep 0.05; done
"""


class RunCommand(msgspec.Struct, frozen=True):
    script: str
    cwd: str


class CommandRunner(Actor):
    """Owns one long-running command at a time, as environment actors will."""

    @handler
    async def run(self, message: RunCommand) -> None:
        async with self.ctx.owned_process(["bash", "-c", message.script], cwd=message.cwd) as proc:
            await proc.wait()


async def owns_its_group(runner: CommandRunner) -> None:
    """The command may write its marker before the actor has recorded its group
    (the actor resumes after the process started): wait for the record too."""
    await wait_until(lambda: bool(runner.ctx.process_groups), what="the group to be tracked")


async def test_children_stop_before_their_parents() -> None:
    stopped: list[str] = []
    async with Runtime() as rt:
        root = StopLog(stopped)
        await rt.spawn(root, name="sessions/s-1")
        child = StopLog(stopped)
        await root.ctx.spawn(child, name="agents/a-1")
        await child.ctx.spawn(StopLog(stopped), name="agents/a-1")
        await root.ctx.spawn(StopLog(stopped), name="agents/a-2")
    assert stopped.index("/sessions/s-1/agents/a-1/agents/a-1") < stopped.index(
        "/sessions/s-1/agents/a-1"
    )
    assert stopped[-1] == "/sessions/s-1"
    assert sorted(stopped) == sorted(
        [
            "/sessions/s-1",
            "/sessions/s-1/agents/a-1",
            "/sessions/s-1/agents/a-1/agents/a-1",
            "/sessions/s-1/agents/a-2",
        ]
    )


async def test_actor_ignoring_the_stop_request_is_cancelled_after_the_grace_period() -> None:
    stopped: list[str] = []
    stubborn = Stubborn()
    with trio.fail_after(HANG_GUARD):
        async with Runtime(grace=0.2) as rt:
            parent = StopLog(stopped)
            await rt.spawn(parent, name="parent")
            await parent.ctx.spawn(stubborn, name="stubborn")
    assert stubborn.cancelled
    assert stopped == ["/parent"], "the parent stops after its stubborn child is cancelled"


async def test_shutdown_ends_a_process_group_that_traps_sigterm(tmp_path: Path) -> None:
    runner = CommandRunner()
    with trio.fail_after(HANG_GUARD):
        async with Runtime(kill_grace=TEST_KILL_GRACE) as rt:
            ref = await rt.spawn(runner, name="environments/local")
            await ref.tell(RunCommand(STUBBORN_COMMAND, str(tmp_path)))
            await wait_for_file(tmp_path / "ready")
            await owns_its_group(runner)
            (pgid,) = runner.ctx.process_groups
            background_child = int((tmp_path / "child.pid").read_text())
            members = running_in_group(pgid)
            assert pgid in members and background_child in members
    # The runtime has shut down: ask the host what is left of the group.
    assert running_in_group(pgid) == []
    assert "term" in (tmp_path / "term.log").read_text(), "SIGTERM came first"


async def test_stopping_one_actor_ends_its_processes_and_spares_its_sibling(
    tmp_path: Path,
) -> None:
    victim_dir, sibling_dir = tmp_path / "victim", tmp_path / "sibling"
    victim_dir.mkdir()
    sibling_dir.mkdir()
    victim, sibling = CommandRunner(), CommandRunner()
    with trio.fail_after(HANG_GUARD):
        async with Runtime(kill_grace=TEST_KILL_GRACE) as rt:
            victim_ref = await rt.spawn(victim)
            sibling_ref = await rt.spawn(sibling)
            await victim_ref.tell(RunCommand(STUBBORN_COMMAND, str(victim_dir)))
            await sibling_ref.tell(RunCommand(STUBBORN_COMMAND, str(sibling_dir)))
            await wait_for_file(victim_dir / "ready")
            await wait_for_file(sibling_dir / "ready")
            await owns_its_group(victim)
            await owns_its_group(sibling)
            (victim_group,) = victim.ctx.process_groups
            (sibling_group,) = sibling.ctx.process_groups
            await rt.stop(victim_ref)
            assert running_in_group(victim_group) == []
            assert sibling_ref.alive
            assert running_in_group(sibling_group) != []
    assert running_in_group(sibling_group) == []


async def test_cancelled_host_still_leaves_no_process(tmp_path: Path) -> None:
    runner = CommandRunner()
    groups: set[int] = set()
    with trio.fail_after(HANG_GUARD), trio.CancelScope() as host_scope:
        async with Runtime(kill_grace=TEST_KILL_GRACE) as rt:
            ref = await rt.spawn(runner)
            await ref.tell(RunCommand(STUBBORN_COMMAND, str(tmp_path)))
            await wait_for_file(tmp_path / "ready")
            await owns_its_group(runner)
            groups.update(runner.ctx.process_groups)
            host_scope.cancel()
            await trio.sleep_forever()
    assert host_scope.cancelled_caught
    assert len(groups) == 1
    assert running_in_group(groups.pop()) == []


def test_the_kill_grace_is_a_runtime_setting() -> None:
    assert Runtime().kill_grace == KILL_GRACE == 2.0
    assert Runtime(kill_grace=TEST_KILL_GRACE).kill_grace == TEST_KILL_GRACE
    with pytest.raises(ValueError):
        Runtime(kill_grace=-1.0)
