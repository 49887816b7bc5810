"""Persistent terminals over a command runner: the same :class:`PersistentShell` as
locally and over SSH, for any :class:`~environments.command_env.CommandEnvironment`.

Such an environment has no stdin channel, so each shell reads a named pipe of its
own, opened read-write (it never sees end-of-file while it lives): the shell's
output is one long streamed command, and each write to its input is a short
command that writes the bytes into the pipe. The shell leads a process group of
its own (``setsid``); close, a timeout and the environment's stop end the whole
group (TERM, grace, KILL) and remove the pipe."""

from __future__ import annotations

import contextlib
import secrets
import shlex
from typing import TYPE_CHECKING

import trio

from environments.command_run import Frames, kill_groups
from environments.envvars import EnvPolicy
from environments.errors import ConnectionLost, EnvironmentError_, InvalidRequest
from environments.local_terminal import RESTARTED
from environments.shell.scripts import RemoteGroup, environment_script
from environments.terminal import PersistentShell
from protocol.environment import TerminalOutput, effective_timeout_ms

if TYPE_CHECKING:
    from environments.command_env import CommandEnvironment

_CHUNK = 65_536
"""Characters per write into the pipe (an argument of one short command)."""
_WRITE = 'printf "%s" "$1" > "$2"'


class _PipeIn(trio.abc.SendStream):
    def __init__(self, environment: CommandEnvironment, pipe: str) -> None:
        self._environment, self._pipe = environment, pipe

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        text = bytes(data).decode(errors="replace")
        for start in range(0, len(text), _CHUNK):
            argv = ["bash", "-c", _WRITE, "troupe", text[start : start + _CHUNK], self._pipe]
            try:
                status, _, err = await self._environment.run(argv)
            except EnvironmentError_ as error:
                raise trio.BrokenResourceError(str(error)) from None
            if status != 0:
                raise trio.BrokenResourceError(err.decode(errors="replace"))

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class _StreamOut(trio.abc.ReceiveStream):
    def __init__(self, frames: Frames) -> None:
        self._frames = frames

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        while True:
            try:
                _, chunk = await anext(self._frames)
            except (StopAsyncIteration, EnvironmentError_):
                return b""
            if chunk:
                return chunk

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class _Open:
    def __init__(self, shell: PersistentShell, group: RemoteGroup, pipe: str) -> None:
        self.shell, self.group, self.pipe = shell, group, pipe
        self.done = trio.Event()
        """Set to end the task that holds the shell's output stream."""
        self.finished = trio.Event()


class CommandTerminals:
    """The open shells of one command environment, by terminal id."""

    def __init__(self, environment: CommandEnvironment) -> None:
        self._environment = environment
        self._open: dict[str, _Open] = {}
        self._settings: dict[str, object] = {}
        self._starting = trio.Lock()

    def groups(self) -> list[int]:
        return [opened.group.pgid for opened in self._open.values()]

    async def run(
        self, terminal_id: str, command: str, timeout_ms: int | None, cwd: str,
        env: EnvPolicy, settings: object = None,
    ) -> TerminalOutput:  # fmt: skip
        """Run ``command`` in the shell ``terminal_id``, started on first use in
        ``cwd`` with the variables ``env`` allows."""
        note = ""
        async with self._starting:
            if terminal_id in self._open and self._settings.get(terminal_id) != settings:
                await self.close(terminal_id)
                note = RESTARTED
            opened = self._open.get(terminal_id) or await self._start(
                terminal_id, cwd, env, settings
            )
        result = await opened.shell.run(command, effective_timeout_ms(timeout_ms) / 1000)
        if result.closed:
            await self.close(terminal_id)
        return TerminalOutput(
            note + result.output,
            result.exit_code,
            result.working_dir,
            result.timed_out,
            result.closed,
            result.duration_ms,
        )

    async def _start(self, terminal_id: str, cwd: str, env: EnvPolicy, settings: object) -> _Open:
        environment = self._environment
        pipe = f"/tmp/.troupe-terminal-{secrets.token_hex(8)}"
        status, out, err = await environment.run(["bash", "-c", 'mkfifo -m 600 -- "$1"', "t", pipe])
        if status != 0:
            why = (err or out).decode(errors="replace").strip()[:200] or f"status {status}"
            raise InvalidRequest(f"cannot open a terminal (mkfifo, from coreutils): {why}")
        inner = f"printf '%s\\n' $$\n{environment_script(env)}\nexec bash --noprofile --norc"
        command = (
            f"cd {shlex.quote(cwd)} && exec setsid -w bash --noprofile --norc "
            f"-c {shlex.quote(inner)} <>{shlex.quote(pipe)} 2>&1"
        )
        argv = ["bash", "-c", command]
        try:
            opened: _Open = await environment.ctx.nursery.start(self._hold, argv, pipe)
        except BaseException:
            with trio.CancelScope(shield=True), contextlib.suppress(EnvironmentError_):
                await environment.run(["rm", "-f", pipe])
            raise
        self._open[terminal_id] = opened
        self._settings[terminal_id] = settings
        await opened.shell.start()
        return opened

    async def _hold(self, argv: list[str], pipe: str, task_status: trio.TaskStatus[_Open]) -> None:
        """Hold the shell's output stream open, in a task of the actor's own (a
        kind's stream may be a context that must end in the task it began in),
        until the terminal is closed or the actor stops."""
        environment = self._environment
        async with environment.stream(argv) as started:
            stdout = _StreamOut(started.frames)
            first = b""
            with trio.fail_after(30):
                while b"\n" not in first:
                    chunk = await stdout.receive_some()
                    if not chunk:
                        raise ConnectionLost("the terminal's shell did not start")
                    first += chunk
            group = RemoteGroup(int(first.split(b"\n", 1)[0]))
            opened = _Open(PersistentShell(_PipeIn(environment, pipe), stdout), group, pipe)
            try:
                task_status.started(opened)
                await opened.done.wait()
            finally:
                opened.finished.set()

    async def close(self, terminal_id: str, *, kill: bool = True) -> bool:
        """End the shell's group and its stream; False when none was open. Without
        ``kill`` only the stream is closed (the whole target is going away)."""
        opened = self._open.pop(terminal_id, None)
        self._settings.pop(terminal_id, None)
        if opened is None:
            return False
        environment = self._environment
        with trio.CancelScope(shield=True), trio.move_on_after(30):
            try:
                if kill:
                    await kill_groups(
                        environment.run,
                        [opened.group],
                        environment.gone_errors,
                        grace=environment.kill_grace,
                    )
                    with contextlib.suppress(*environment.gone_errors):
                        await environment.run(["rm", "-f", opened.pipe])
            finally:
                opened.done.set()
                await opened.finished.wait()
        return True

    async def close_all(self, *, kill: bool = True) -> None:
        for terminal_id in list(self._open):
            with contextlib.suppress(EnvironmentError_):
                await self.close(terminal_id, kill=kill)
