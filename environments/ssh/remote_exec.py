"""trio side of a remote command: the timeout, the abort, the deltas, the result.

The asyncio side (:mod:`environments.ssh.command`) drains the channel; this side
waits for the wrapper's exit report within the timeout, kills the process group
through the host's kill path (:mod:`environments.ssh.killer`, which has a session
of its own, so a kill never waits for the channels the commands hold) on timeout
or abort (the wrapper itself ends stragglers after a normal exit), forwards output
deltas to a watcher, and builds the ExecResult. A caller that cancels waits,
shielded and bounded, until the group is gone: cancelling really stops the remote
work, also when it comes while the command is being started
(:class:`~environments.ssh.command.CommandStart`). A kill that cannot be delivered
is owed, and paid on reconnect.
"""

from __future__ import annotations

import secrets
import time

import trio
import trio.lowlevel

from actors.kernel import KILL_GRACE
from environments.capture import DeltaForwarder
from environments.envvars import EnvPolicy
from environments.errors import ConnectionLost, FileNotFound
from environments.shell.markers import MarkerFilter
from environments.shell.scripts import LostCall, Markers, RemoteGroup, command_script
from environments.ssh.asyncio_loop import AsyncioLoop
from environments.ssh.command import CommandOutcome, CommandStart, RemoteCommand, current_group
from environments.ssh.pool import HostPool
from protocol.environment import ExecCommand, ExecResult, effective_timeout_ms, timeout_message

_KILL_BOUND = KILL_GRACE + 25.0
"""Seconds a shielded remote kill may take before the call stops waiting for it (the
kill path carries on, and remembers the group if it cannot be delivered)."""
_CLOSE_BOUND = 5.0
_SETTLE = 0.25
"""Seconds the wrapper lets stragglers finish writing before it ends their group."""


def _owed(group: RemoteGroup | None, markers: Markers) -> RemoteGroup | LostCall:
    """What ends a call's command: its group, or, when the report never came (the
    link died between the fork and the report), the call's nonce."""
    return group if group is not None else LostCall(markers.nonce)


async def _kill_group(
    bridge: AsyncioLoop, pool: HostPool, command: RemoteCommand, markers: Markers
) -> None:
    """End the command's group and return once it is gone (or the kill is owed)."""
    with trio.move_on_after(_KILL_BOUND):
        # A command on a busy host may not have reported its group yet: the
        # report is on its way unless the channel ends, so wait for either.
        group = await bridge.run(current_group(command))
        # None: the channel ended unreported (a lost link, or no working directory,
        # where the nonce finds nothing): the wrapper, if it runs, names the call.
        await bridge.run(pool.kill([_owed(group, markers)]))


async def _abandon_start(
    bridge: AsyncioLoop, pool: HostPool, start: CommandStart, markers: Markers
) -> None:
    """The start did not reach the caller (who left, or it failed): end whatever it
    got running, as for a caller who leaves later (shielded, bounded)."""
    with trio.CancelScope(shield=True), trio.move_on_after(_KILL_BOUND):
        try:
            command = await bridge.run(start.abandon())
        except ConnectionLost:  # the bridge is gone, and the start with it
            return
        if command is not None:
            try:
                await _kill_group(bridge, pool, command, markers)
            finally:
                await bridge.run(command.finish())


async def _forward_deltas(
    bridge: AsyncioLoop, command: RemoteCommand, output_to: object, forwarded: trio.Event
) -> None:
    forwarders = {
        "stdout": DeltaForwarder("stdout", output_to),
        "stderr": DeltaForwarder("stderr", output_to),
    }
    while (batch := await bridge.run(command.next_deltas())) is not None:
        for stream, chunk in batch:
            await forwarders[stream].forward(chunk)
    forwarded.set()


async def run_remote_command(
    bridge: AsyncioLoop,
    pool: HostPool,
    request: ExecCommand,
    cwd: str,
    policy: EnvPolicy,
    capture_cap: int,
) -> ExecResult:
    timeout_ms = effective_timeout_ms(request.timeout_ms)
    markers = Markers(secrets.token_hex(6))
    script = command_script(
        request.command, cwd, markers, policy, request.env_vars, _SETTLE, pool.kill_grace
    )
    started = time.monotonic()
    timed_out = False
    start = CommandStart(pool)
    try:
        command = await bridge.run(
            start.run(
                script,
                MarkerFilter(markers),
                capture_cap,
                request.output_to is not None,
                markers.tag,
            )
        )
    except BaseException:
        await _abandon_start(bridge, pool, start, markers)
        raise
    try:
        async with trio.open_nursery() as watchers:
            forwarded = trio.Event()
            if request.output_to is None:
                forwarded.set()
            else:
                watchers.start_soon(_forward_deltas, bridge, command, request.output_to, forwarded)
            with trio.move_on_after(timeout_ms / 1000) as deadline:
                await bridge.run(command.wait_exited())
            if deadline.cancelled_caught:
                timed_out = True
                await _kill_group(bridge, pool, command, markers)
            # After a normal exit the wrapper ends stragglers itself (settle, TERM,
            # 2 s, KILL, up to 5 s to see them gone) and the channel closes; this
            # bound only guards a hung link.
            with trio.move_on_after(_SETTLE + KILL_GRACE + 8.0):
                await bridge.run(command.wait_drained())
            with trio.move_on_after(1.0):
                await trio.lowlevel.checkpoint()  # let the delta forwarder take the last batch
            watchers.cancel_scope.cancel()
    except BaseException:
        with trio.CancelScope(shield=True):
            await _kill_group(bridge, pool, command, markers)
        raise
    finally:
        outcome: CommandOutcome | None = None
        with trio.CancelScope(shield=True), trio.move_on_after(_CLOSE_BOUND):
            outcome = await bridge.run(command.finish())
    if outcome is None:  # the bridge did not answer in time: the link is hung
        await bridge.run(pool.remember_orphan(_owed(command.group, markers)))
        raise ConnectionLost(f"{pool.target}: the connection stopped answering")
    if outcome.exit_status is None and not outcome.no_cwd and not timed_out:
        await bridge.run(pool.remember_orphan(_owed(outcome.group, markers)))
    return _result(pool, request, cwd, outcome, timed_out, timeout_ms, started)


def _result(
    pool: HostPool,
    request: ExecCommand,
    cwd: str,
    outcome: CommandOutcome,
    timed_out: bool,
    timeout_ms: int,
    started: float,
) -> ExecResult:
    if outcome.no_cwd:
        raise FileNotFound(f"working directory {cwd} does not exist on {pool.target}")
    if outcome.exit_status is None and not timed_out:
        raise ConnectionLost(
            f"{pool.target}: connection lost while running {request.command!r}; "
            "it will be reconnected for the next call"
        )
    out = outcome.stdout
    if timed_out:
        out = f"{out}\n{timeout_message(timeout_ms)}" if out else timeout_message(timeout_ms)
    return ExecResult(
        stdout=out,
        stderr=outcome.stderr,
        exit_code=outcome.exit_status if outcome.exit_status is not None else 124,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout_omitted=outcome.stdout_omitted,
        stderr_omitted=outcome.stderr_omitted,
    )
