"""The local environment's persistent terminals: one long-lived bash per terminal id,
each in its own process group, ended by close, by a timeout and when the
environment stops (agentic-behavior-tool.md 6.1).

Under the OS sandbox the shell is started inside one long-lived sandbox (bwrap
leads the group; ending the group tears the sandbox down with everything in it).
The sandbox is fixed when the shell starts: a call that asks for other settings
(the policy changed) ends the shell and starts a fresh one, and says so."""

from __future__ import annotations

import subprocess
from pathlib import Path

import trio

from actors.kernel import terminate_groups
from environments.terminal import PersistentShell
from protocol.environment import TerminalOutput, effective_timeout_ms

RESTARTED = "[the sandbox or variable settings changed: the persistent terminal was restarted]\n"


class LocalTerminals:
    """The open shells of one environment, by terminal id."""

    def __init__(self, kill_grace: float) -> None:
        self._open: dict[str, tuple[trio.Process, PersistentShell]] = {}
        self._settings: dict[str, object] = {}
        self._kill_grace = kill_grace
        self._starting = trio.Lock()

    def pids(self) -> list[int]:
        """The shells' process ids (each leads its own group)."""
        return [process.pid for process, _ in self._open.values()]

    async def run(
        self, terminal_id: str, command: str, timeout_ms: int | None, cwd: Path,
        env: dict[str, str], argv: list[str] | None = None, settings: object = None,
    ) -> TerminalOutput:  # fmt: skip
        """Run ``command`` in the shell ``terminal_id``, started with ``argv`` (plain
        bash unless given) on first use; ``settings`` names what confines it."""
        note = ""
        async with self._starting:
            if terminal_id in self._open and self._settings.get(terminal_id) != settings:
                await self.close(terminal_id)
                note = RESTARTED
            _, shell = self._open.get(terminal_id) or await self._start(
                terminal_id, cwd, env, argv or ["bash", "--noprofile", "--norc"], settings
            )
        result = await shell.run(command, effective_timeout_ms(timeout_ms) / 1000)
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
        self, terminal_id: str, cwd: Path, env: dict[str, str], argv: list[str], settings: object
    ) -> tuple[trio.Process, PersistentShell]:
        process = await trio.lowlevel.open_process(
            argv,
            cwd=str(cwd),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert process.stdin is not None and process.stdout is not None
        shell = PersistentShell(process.stdin, process.stdout)
        self._open[terminal_id] = (process, shell)
        self._settings[terminal_id] = settings
        await shell.start()
        return process, shell

    async def close(self, terminal_id: str) -> bool:
        """End the shell and everything in its group; False when none was open."""
        opened = self._open.pop(terminal_id, None)
        self._settings.pop(terminal_id, None)
        if opened is None:
            return False
        process, _ = opened
        with trio.CancelScope(shield=True):
            await terminate_groups({process.pid}, self._kill_grace)
            await process.wait()
        return True

    async def close_all(self) -> None:
        for terminal_id in list(self._open):
            await self.close(terminal_id)
