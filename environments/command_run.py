"""One command through a :class:`~environments.command_env.CommandEnvironment`:
the timeout, the abort, the deltas, the result.

The command runs under the shell wrapper (:func:`environments.shell.scripts.command_script`):
it leads a process group of its own, the wrapper reports the group and the exit
status on stderr behind a per-call nonce, and ends stragglers of the group after a
normal exit. On timeout or abort a second command ends the whole group (TERM,
grace, KILL, then waits until nothing of it runs:
:func:`~environments.shell.scripts.kill_script`), so a group that traps SIGTERM is
ended too. A caller that cancels waits, shielded and bounded, until the group is
gone. An output stream that breaks before the wrapper reported an exit status (the
daemon or the link died) is :class:`~environments.errors.ConnectionLost`, and the
group is ended once the environment answers again.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal, Protocol

import trio

from actors.kernel import KILL_GRACE
from environments.capture import OutputCollector
from environments.envvars import EnvPolicy
from environments.errors import ConnectionLost, EnvironmentError_, FileNotFound
from environments.shell.markers import MarkerFilter
from environments.shell.scripts import (
    LostCall,
    Markers,
    RemoteGroup,
    command_script,
    kill_script,
)
from protocol.environment import ExecCommand, ExecResult, effective_timeout_ms, timeout_message

_SETTLE = 0.25
_KILL_BOUND = KILL_GRACE + 25.0
_DRAIN_BOUND = _SETTLE + KILL_GRACE + 8.0

Frames = AsyncIterator[tuple[Literal["stdout", "stderr"], bytes]]


class CommandStream(Protocol):
    """A started command: its output as it arrives, then its exit status (None if
    the environment cannot say, e.g. its connection broke)."""

    frames: Frames

    async def status(self) -> int | None: ...


Runner = Callable[[list[str]], Awaitable[tuple[int, bytes, bytes]]]
Alive = Callable[[], Awaitable[bool]]


class Lost:
    """What commands of a lost link may still be running: ended first thing once the
    environment answers again (by group, or through their wrapper's nonce when the
    group was never reported)."""

    def __init__(self) -> None:
        self.groups: list[RemoteGroup] = []
        self.calls: list[LostCall] = []

    def add(self, group: RemoteGroup | None, markers: Markers) -> None:
        if group is not None:
            self.groups.append(group)
        self.calls.append(LostCall(markers.nonce))

    async def settle(
        self, run: Runner, gone: tuple[type[Exception], ...], grace: float = KILL_GRACE
    ) -> None:
        """End them (TERM, ``grace`` seconds, KILL); raises (keeping them) while the
        environment cannot be reached."""
        if not (self.groups or self.calls):
            return
        groups, calls = list(self.groups), list(self.calls)
        with contextlib.suppress(*gone):  # the script ran (or nothing runs there): done
            await run(["bash", "-c", kill_script(groups, grace, calls)])
        self.groups = [g for g in self.groups if g not in groups]
        self.calls = [c for c in self.calls if c not in calls]


class _LinkDead(Exception):
    pass


async def _watch(alive: Alive, interval: float, count_max: int) -> None:
    """Return never while the environment answers; raise once it missed
    ``count_max`` probes in a row, each given ``interval`` seconds."""
    missed = 0
    while True:
        await trio.sleep(interval)
        answered = False
        with trio.move_on_after(interval):
            answered = await alive()
        missed = 0 if answered else missed + 1
        if missed >= count_max:
            raise _LinkDead(f"no answer to {count_max} probes {interval:g} s apart")


async def kill_groups(
    run: Runner,
    groups: list[RemoteGroup],
    gone: tuple[type[Exception], ...],
    calls: list[LostCall] | None = None,
    grace: float = KILL_GRACE,
) -> None:
    """End ``groups`` (and those of ``calls``, found by their wrapper's nonce) and
    return once they are gone (bounded; TERM, ``grace`` seconds, KILL); an
    environment whose target is ``gone`` runs nothing any more."""
    if not (groups or calls):
        return
    with trio.move_on_after(_KILL_BOUND), contextlib.suppress(*gone):
        await run(["bash", "-c", kill_script(groups, grace, calls or ())])


class _Run:
    def __init__(self, markers: Markers, capture_cap: int, output_to: object) -> None:
        self.filter = MarkerFilter(markers)
        self.stdout = OutputCollector("stdout", capture_cap, output_to)
        self.stderr = OutputCollector("stderr", capture_cap, output_to)
        self.group: RemoteGroup | None = None
        self.group_known = trio.Event()
        self.exited = trio.Event()
        self.drained = trio.Event()
        self.broken: EnvironmentError_ | None = None

    async def pump(self, frames: Frames) -> None:
        try:
            async for stream, chunk in frames:
                if stream == "stdout":
                    await self.stdout.feed(chunk)
                    continue
                await self.stderr.feed(self.filter.feed(chunk))
                self._note()
        except EnvironmentError_ as error:
            self.broken = error
        finally:
            await self.stderr.feed(self.filter.flush())
            self._note()
            self.exited.set()
            self.drained.set()

    def _note(self) -> None:
        if self.group is None and self.filter.started and self.filter.pgid is not None:
            self.group = RemoteGroup(self.filter.pgid, self.filter.start_time)
            self.group_known.set()
        if self.filter.exited:
            self.exited.set()


async def _kill(
    run: Runner, command: _Run, gone: tuple[type[Exception], ...], markers: Markers, grace: float
) -> None:
    with trio.move_on_after(_KILL_BOUND):
        # The group is reported first thing; wait for it unless the stream ended.
        async with trio.open_nursery() as nursery:

            async def either(event: trio.Event) -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(either, command.group_known)
            nursery.start_soon(either, command.drained)
        if command.group is not None:
            await kill_groups(run, [command.group], gone, grace=grace)
        else:  # not read yet (an abort cancelled the reader): found by the nonce
            await kill_groups(run, [], gone, [LostCall(markers.nonce)], grace)


async def run_command(
    stream: contextlib.AbstractAsyncContextManager[CommandStream],
    run: Runner,
    request: ExecCommand,
    markers: Markers,
    capture_cap: int,
    cwd: str,
    gone: tuple[type[Exception], ...] = (),
    where: str = "the environment",
    lost: Lost | None = None,
    alive: Alive | None = None,
    keepalive: tuple[float, int] = (5.0, 3),
    grace: float = KILL_GRACE,
) -> ExecResult:
    """Run the wrapped command ``stream`` starts (its script made by :func:`script`
    with ``markers``); ``run`` runs the short helpers that end its group. While it
    runs, ``alive`` is asked every ``keepalive[0]`` seconds; ``keepalive[1]`` missed
    answers in a row, or an output stream that breaks, is a lost link: the call
    fails with ``ConnectionLost`` and the command goes to ``lost``, to be ended when
    the environment answers again."""
    timeout_ms = effective_timeout_ms(request.timeout_ms)
    started = time.monotonic()
    command = _Run(markers, capture_cap, request.output_to)
    timed_out = False
    status: int | None = None
    dead: str | None = None
    # Errors are raised after the stream's block: a kind's stream may hold a
    # nursery, which would wrap anything raised inside it in an exception group.
    async with stream as started_command:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(command.pump, started_command.frames)
                if alive is not None:
                    nursery.start_soon(_watch, alive, *keepalive)
                with trio.move_on_after(timeout_ms / 1000) as deadline:
                    await command.exited.wait()
                if deadline.cancelled_caught:
                    timed_out = True
                    await _kill(run, command, gone, markers, grace)
                with trio.move_on_after(_DRAIN_BOUND):
                    await command.drained.wait()
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            found = group.subgroup(_LinkDead)
            if found is None:
                with trio.CancelScope(shield=True):
                    await _kill(run, command, gone, markers, grace)
                raise
            dead = str(found.exceptions[0])
        except BaseException:
            with trio.CancelScope(shield=True):
                await _kill(run, command, gone, markers, grace)
            raise
        if dead is None and not command.filter.no_cwd:
            status = command.filter.exit_status
            if status is None and not timed_out:
                with trio.move_on_after(5), contextlib.suppress(EnvironmentError_):
                    status = await started_command.status()
    if dead is not None:
        if lost is not None:  # nothing can end it now: once the environment answers
            lost.add(command.group, markers)
        raise ConnectionLost(f"{where}: {dead}")
    if command.filter.no_cwd:
        raise FileNotFound(f"working directory {cwd} does not exist in {where}")
    if status is None and not timed_out:
        if lost is not None:
            lost.add(command.group, markers)
            with trio.CancelScope(shield=True), contextlib.suppress(EnvironmentError_):
                with trio.move_on_after(_KILL_BOUND):
                    await lost.settle(run, gone)
        reason = command.broken or "the output stream ended without an exit status"
        raise ConnectionLost(f"{where}: {reason}")
    out = command.stdout.text()
    if timed_out:
        out = f"{out}\n{timeout_message(timeout_ms)}" if out else timeout_message(timeout_ms)
    return ExecResult(
        stdout=out,
        stderr=command.stderr.text(),
        exit_code=status if isinstance(status, int) else 124,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout_omitted=command.stdout.omitted,
        stderr_omitted=command.stderr.omitted,
    )


def script(
    request: ExecCommand, cwd: str, markers: Markers, policy: EnvPolicy, grace: float = KILL_GRACE
) -> list[str]:
    """The argv that runs ``request`` under the wrapper in ``cwd`` (``grace``: TERM to
    KILL for stragglers of its group after it exits)."""
    wrapped = command_script(
        request.command, cwd, markers, policy, request.env_vars, _SETTLE, grace
    )
    return ["bash", "-c", wrapped]


def new_markers() -> Markers:
    return Markers(secrets.token_hex(6))
