"""trio side of a remote command: the timeout, the abort, the deltas, the result.

The asyncio side (:mod:`environments.ssh.command`) drains the channel; this side
waits for the wrapper's exit report within the timeout, kills the process group
from a second channel on timeout or abort (the wrapper itself ends stragglers after
a normal exit), forwards output deltas to a watcher, and builds the ExecResult. A
caller that cancels waits, shielded and bounded, for the kill: cancelling really
stops the remote work.
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
from environments.ssh.bridge import AsyncioLoop
from environments.ssh.command import CommandOutcome, RemoteCommand, current_pgid, start_command
from environments.ssh.markers import MarkerFilter
from environments.ssh.pool import HostPool
from environments.ssh.scripts import Markers, command_script, kill_script
from protocol.environment import ExecCommand, ExecResult, effective_timeout_ms, timeout_message

_KILL_BOUND = 10.0
"""Seconds a shielded remote kill or close may take before the call gives up on it."""
_SETTLE = 0.25
"""Seconds the wrapper lets stragglers finish writing before it ends their group."""


async def _kill_group(bridge: AsyncioLoop, pool: HostPool, command: RemoteCommand) -> None:
    pgid = await bridge.run(current_pgid(command))
    if pgid is not None:
        with trio.move_on_after(_KILL_BOUND):
            await bridge.run(pool.run(kill_script([pgid]), timeout=_KILL_BOUND))


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
    script = command_script(request.command, cwd, markers, policy, request.env_vars, _SETTLE)
    started = time.monotonic()
    timed_out = False
    command = await bridge.run(
        start_command(
            pool, script, MarkerFilter(markers), capture_cap, request.output_to is not None
        )
    )
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
                await _kill_group(bridge, pool, command)
            # After a normal exit the wrapper ends stragglers itself (settle, TERM,
            # 2 s, KILL) and the channel closes; this bound only guards a hung link.
            with trio.move_on_after(_SETTLE + KILL_GRACE + 1.0):
                await bridge.run(command.wait_drained())
            with trio.move_on_after(1.0):
                await trio.lowlevel.checkpoint()  # let the delta forwarder take the last batch
            watchers.cancel_scope.cancel()
    except BaseException:
        with trio.CancelScope(shield=True):
            await _kill_group(bridge, pool, command)
        raise
    finally:
        outcome = None
        with trio.CancelScope(shield=True), trio.move_on_after(_KILL_BOUND):
            outcome = await bridge.run(command.finish())
    if outcome is None:
        raise TimeoutError(f"the SSH channel of {request.command!r} did not close in time")
    if outcome.exit_status is None and outcome.pgid is not None and not timed_out:
        await bridge.run(pool.remember_orphan(outcome.pgid))
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
