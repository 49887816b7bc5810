"""One command in a container: the timeout, the abort, the deltas, the result.

The command runs under the same bash wrapper as over SSH
(:func:`environments.shell.scripts.command_script`): the command leads a process
group of its own, the wrapper reports the group and the exit status on stderr
behind a per-call nonce, and ends stragglers of the group after a normal exit. On
timeout or abort a second exec ends the whole group (TERM, grace, KILL, then waits
until nothing of it runs: :func:`~environments.shell.scripts.kill_script`), so a
group that traps SIGTERM is ended too. A caller that cancels waits, shielded and
bounded, until the group is gone.
"""

from __future__ import annotations

import contextlib
import secrets
import time

import trio

from actors.kernel import KILL_GRACE
from environments.capture import OutputCollector
from environments.docker.api import ContainerGone, DockerAPI, DockerError
from environments.envvars import EnvPolicy
from environments.errors import ConnectionLost, FileNotFound
from environments.shell.markers import MarkerFilter
from environments.shell.scripts import Markers, RemoteGroup, command_script, kill_script
from protocol.environment import ExecCommand, ExecResult, effective_timeout_ms, timeout_message

_SETTLE = 0.25
_KILL_BOUND = KILL_GRACE + 25.0
_DRAIN_BOUND = _SETTLE + KILL_GRACE + 8.0


async def kill_groups(
    api: DockerAPI, container: str, groups: list[RemoteGroup], user: str | None
) -> None:
    """End ``groups`` in the container and return once they are gone (bounded)."""
    if not groups:
        return
    with trio.move_on_after(_KILL_BOUND):
        with contextlib.suppress(ContainerGone):  # nothing runs in a container that is gone
            await api.run(container, ["bash", "-c", kill_script(groups, KILL_GRACE)], user=user)


class _Run:
    def __init__(self, markers: Markers, capture_cap: int, output_to: object) -> None:
        self.filter = MarkerFilter(markers)
        self.stdout = OutputCollector("stdout", capture_cap, output_to)
        self.stderr = OutputCollector("stderr", capture_cap, output_to)
        self.group: RemoteGroup | None = None
        self.group_known = trio.Event()
        self.exited = trio.Event()
        self.drained = trio.Event()
        self.broken: DockerError | None = None

    async def pump(self, api: DockerAPI, exec_id: str) -> None:
        try:
            async with api.exec_stream(exec_id) as frames:
                async for stream, chunk in frames:
                    if stream == "stdout":
                        await self.stdout.feed(chunk)
                        continue
                    await self.stderr.feed(self.filter.feed(chunk))
                    self._note()
        except DockerError as error:
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


async def _kill(api: DockerAPI, container: str, run: _Run, user: str | None) -> None:
    with trio.move_on_after(_KILL_BOUND):
        # The group is reported first thing; wait for it unless the stream ended.
        async with trio.open_nursery() as nursery:

            async def either(event: trio.Event) -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(either, run.group_known)
            nursery.start_soon(either, run.drained)
        if run.group is not None:
            await kill_groups(api, container, [run.group], user)


async def run_command(
    api: DockerAPI,
    container: str,
    user: str | None,
    request: ExecCommand,
    cwd: str,
    policy: EnvPolicy,
    capture_cap: int,
) -> ExecResult:
    timeout_ms = effective_timeout_ms(request.timeout_ms)
    markers = Markers(secrets.token_hex(6))
    script = command_script(
        request.command, cwd, markers, policy, request.env_vars, _SETTLE, KILL_GRACE
    )
    started = time.monotonic()
    exec_id = await api.exec_create(container, ["bash", "-c", script], user=user)
    run = _Run(markers, capture_cap, request.output_to)
    timed_out = False
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run.pump, api, exec_id)
            with trio.move_on_after(timeout_ms / 1000) as deadline:
                await run.exited.wait()
            if deadline.cancelled_caught:
                timed_out = True
                await _kill(api, container, run, user)
            with trio.move_on_after(_DRAIN_BOUND):
                await run.drained.wait()
            nursery.cancel_scope.cancel()
    except BaseException:
        with trio.CancelScope(shield=True):
            await _kill(api, container, run, user)
        raise
    if run.filter.no_cwd:
        raise FileNotFound(f"working directory {cwd} does not exist in the container")
    status = run.filter.exit_status
    if status is None and not timed_out:
        with trio.move_on_after(5):
            status = (await api.exec_inspect(exec_id)).get("ExitCode")
        if status is None:
            if run.group is not None:
                with trio.CancelScope(shield=True):
                    await kill_groups(api, container, [run.group], user)
            reason = run.broken or "the exec stream ended without an exit status"
            raise ConnectionLost(f"container {container[:12]}: {reason}")
    out = run.stdout.text()
    if timed_out:
        out = f"{out}\n{timeout_message(timeout_ms)}" if out else timeout_message(timeout_ms)
    return ExecResult(
        stdout=out,
        stderr=run.stderr.text(),
        exit_code=status if isinstance(status, int) else 124,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout_omitted=run.stdout.omitted,
        stderr_omitted=run.stderr.omitted,
    )
