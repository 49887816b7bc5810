"""A pseudo-terminal for the interactive tests: the command runs with a real tty as
its controlling terminal, so typed lines, echo and Ctrl-C (the line discipline's
SIGINT to the foreground process group) behave as they do for a person."""

from __future__ import annotations

import fcntl
import os
import pty
import subprocess
import termios
from pathlib import Path

import trio

HANG_GUARD = 60


def _take_terminal() -> None:  # runs in the child, before exec
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """``screen`` is everything the command has shown so far (and the echo)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
            preexec_fn=_take_terminal, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self._stream = trio.lowlevel.FdStream(master)
        self.screen = ""

    async def expect(self, text: str, after: int = 0) -> int:
        """Read until ``text`` shows (after position ``after``); its end position."""
        while text not in self.screen[after:]:
            try:
                chunk = await self._stream.receive_some()
            except trio.BrokenResourceError:  # EIO: the command exited, the tty is closed
                chunk = b""
            if not chunk:
                raise AssertionError(f"{text!r} never showed; the screen:\n{self.screen}")
            self.screen += chunk.decode(errors="replace").replace("\r\n", "\n")
        return self.screen.index(text, after) + len(text)

    async def type(self, text: str) -> None:
        await self._stream.send_all(text.encode())

    async def finish(self) -> int:
        """Read the rest of the screen and return the exit code."""
        while True:
            try:
                chunk = await self._stream.receive_some()
            except trio.BrokenResourceError:
                chunk = b""
            if not chunk:
                break
            self.screen += chunk.decode(errors="replace").replace("\r\n", "\n")
        return await trio.to_thread.run_sync(lambda: self.process.wait(HANG_GUARD))

    async def aclose(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            await trio.to_thread.run_sync(self.process.wait)
        await self._stream.aclose()
