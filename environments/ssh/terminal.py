"""Persistent terminals over SSH: the same :class:`PersistentShell` as locally, its
bash in its own process group on the remote host (``setsid``), its byte streams
carried over one SSH channel through the asyncio bridge. Close, a timeout and the
environment's stop end the whole group (TERM, grace, KILL) and the channel.

The shell starts with the variables the policy allows and, under the OS sandbox,
inside one long-lived sandbox of the host's bwrap (it leads the group; ending the
group tears the sandbox down). Other settings on a later call restart the shell."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import trio

from environments.envvars import EnvPolicy
from environments.errors import ConnectionLost
from environments.local_terminal import RESTARTED
from environments.shell.scripts import RemoteGroup, environment_script
from environments.ssh.asyncio_loop import AsyncioLoop
from environments.ssh.connect import LINK_ERRORS
from environments.ssh.pool import HostPool, RemoteProcess
from environments.terminal import PersistentShell
from protocol.environment import TerminalOutput, effective_timeout_ms

_READ_SIZE = 65_536


class _ChannelIn(trio.abc.SendStream):
    def __init__(self, bridge: AsyncioLoop, remote: RemoteProcess) -> None:
        self._bridge, self._remote = bridge, remote

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        stdin = self._remote.process.stdin

        async def write() -> None:
            stdin.write(bytes(data))
            await stdin.drain()

        try:
            await self._bridge.run(write())
        except (ConnectionLost, *LINK_ERRORS) as error:
            raise trio.BrokenResourceError(str(error)) from None

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class _ChannelOut(trio.abc.ReceiveStream):
    def __init__(self, bridge: AsyncioLoop, remote: RemoteProcess) -> None:
        self._bridge, self._remote = bridge, remote

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        try:
            return await self._bridge.run(self._remote.process.stdout.read(_READ_SIZE))
        except (ConnectionLost, *LINK_ERRORS):
            return b""

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class SSHTerminals:
    """The open shells of one SSH environment, by terminal id."""

    def __init__(self, bridge: AsyncioLoop, pool: Callable[[], HostPool]) -> None:
        self._bridge = bridge
        self._pool = pool
        self._open: dict[str, tuple[RemoteProcess, RemoteGroup, PersistentShell]] = {}
        self._settings: dict[str, object] = {}
        self._starting = trio.Lock()

    def groups(self) -> list[int]:
        return [group.pgid for _, group, _ in self._open.values()]

    async def run(
        self, terminal_id: str, command: str, timeout_ms: int | None, cwd: str,
        shell: list[str] | None = None, env: EnvPolicy | None = None, settings: object = None,
    ) -> TerminalOutput:  # fmt: skip
        """Run ``command`` in the shell ``terminal_id``, started on first use as
        ``shell`` (plain bash unless given) with the variables ``env`` allows."""
        note = ""
        async with self._starting:
            if terminal_id in self._open and self._settings.get(terminal_id) != settings:
                await self.close(terminal_id)
                note = RESTARTED
            opened = self._open.get(terminal_id) or await self._start(
                terminal_id, cwd, shell or ["bash", "--noprofile", "--norc"], env, settings
            )
        result = await opened[2].run(command, effective_timeout_ms(timeout_ms) / 1000)
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

    async def _start(
        self, terminal_id: str, cwd: str, shell: list[str], env: EnvPolicy | None,
        settings: object,
    ) -> tuple[RemoteProcess, RemoteGroup, PersistentShell]:  # fmt: skip
        variables = f"{environment_script(env)}\n" if env is not None else ""
        inner = f"printf '%s\\n' $$\n{variables}exec {shlex.join(shell)}"
        command = (
            f"cd {shlex.quote(cwd)} && exec setsid -w bash --noprofile --norc "
            f"-c {shlex.quote(inner)} 2>&1"
        )
        remote = await self._bridge.run(self._pool().open_interactive(command))
        stdout = _ChannelOut(self._bridge, remote)
        first = b""
        with trio.fail_after(30):
            while b"\n" not in first:
                chunk = await stdout.receive_some()
                if not chunk:
                    await self._bridge.run(self._pool().finish(remote))
                    raise ConnectionLost("the remote shell did not start")
                first += chunk
        group = RemoteGroup(int(first.split(b"\n", 1)[0]))
        persistent = PersistentShell(_ChannelIn(self._bridge, remote), stdout)
        opened = (remote, group, persistent)
        self._open[terminal_id] = opened
        self._settings[terminal_id] = settings
        await persistent.start()
        return opened

    async def close(self, terminal_id: str) -> bool:
        """End the shell's group and its channel; False when none was open."""
        opened = self._open.pop(terminal_id, None)
        self._settings.pop(terminal_id, None)
        if opened is None:
            return False
        remote, group, _ = opened
        with trio.CancelScope(shield=True), trio.move_on_after(15):
            await self._bridge.run(self._pool().kill([group]))
            await self._bridge.run(self._pool().finish(remote))
        return True

    async def close_all(self) -> None:
        for terminal_id in list(self._open):
            await self.close(terminal_id)
