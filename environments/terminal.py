"""A persistent shell: one long-lived bash that keeps its working directory and
exported variables from one command to the next (agentic-behavior-tool.md 6.1).

Each command is handed to the shell as data, ``eval '<command>'``, quoted so that
nothing in it (an unclosed quote, a heredoc, ``}``) can swallow the lines that
follow; its standard input is /dev/null so it cannot read them either. After it
the shell prints a marker line with a per-command nonce, the exit status and the
working directory; output up to the marker is the command's. Standard error is
merged into standard output, as a terminal shows it. A command that runs past its
timeout, or ``exit``, ends the shell: the caller is told the terminal closed.

The byte streams are plain trio streams, so the same shell runs over a local
process's pipes or a remote channel.
"""

from __future__ import annotations

import re
import secrets
import shlex
import time

import msgspec
import trio

OUTPUT_CAP = 1_000_000
"""Characters of one command's output kept (the head and tail beyond this)."""

_READ_SIZE = 65_536
STARTUP = "exec 2>&1\nunset HISTFILE\nexport PS1='' PS2=''\n"


class TerminalResult(msgspec.Struct, frozen=True):
    """One command's output, status and the shell's state after it."""

    output: str
    exit_code: int | None
    working_dir: str | None
    timed_out: bool = False
    closed: bool = False
    duration_ms: int = 0


class PersistentShell:
    """Runs commands one at a time in a bash reading from ``stdin``."""

    def __init__(self, stdin: trio.abc.SendStream, stdout: trio.abc.ReceiveStream) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._lock = trio.Lock()
        self._buffer = b""
        self.closed = False
        self.working_dir: str | None = None

    async def start(self) -> None:
        await self._stdin.send_all(STARTUP.encode())

    async def run(self, command: str, timeout_s: float) -> TerminalResult:
        """Run ``command``; on timeout the caller must end the shell's group."""
        async with self._lock:
            if self.closed:
                return TerminalResult("The persistent terminal is closed.", None, None, closed=True)
            nonce = secrets.token_hex(8)
            marker = f"__TROUPE_DONE_{nonce}"
            script = (
                f"eval {shlex.quote(command)} </dev/null\n"
                f'printf \'\\n{marker} %d %s\\n\' "$?" "$PWD"\n'
            )
            started = time.monotonic()
            try:
                await self._stdin.send_all(script.encode())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self.closed = True
                return TerminalResult(
                    "The persistent terminal has exited.", None, None, closed=True
                )
            pattern = re.compile(rb"\n?" + marker.encode() + rb" (\d+) ([^\n]*)\n")
            match: re.Match[bytes] | None = None
            with trio.move_on_after(timeout_s) as deadline:
                while (match := pattern.search(self._buffer)) is None:
                    chunk = await self._stdout.receive_some(_READ_SIZE)
                    if not chunk:
                        self.closed = True
                        output = _text(self._buffer)
                        self._buffer = b""
                        return TerminalResult(
                            output + "\n[the shell exited; the persistent terminal is closed]",
                            None,
                            self.working_dir,
                            closed=True,
                            duration_ms=_ms(started),
                        )
                    self._buffer += chunk
            elapsed = _ms(started)
            if deadline.cancelled_caught:
                self.closed = True
                output = _text(self._buffer)
                self._buffer = b""
                return TerminalResult(
                    output + f"\n[timed out after {timeout_s:g} s; the persistent terminal was "
                    "closed and its processes ended]",
                    None,
                    self.working_dir,
                    timed_out=True,
                    closed=True,
                    duration_ms=elapsed,
                )
            assert match is not None  # the loop ends on a match, or on the deadline above
            output = _text(self._buffer[: match.start()])
            self._buffer = self._buffer[match.end() :]
            self.working_dir = match.group(2).decode(errors="replace")
            return TerminalResult(
                output, int(match.group(1)), self.working_dir, duration_ms=elapsed
            )


def _text(raw: bytes) -> str:
    text = raw.decode(errors="replace")
    if len(text) > OUTPUT_CAP:
        half = OUTPUT_CAP // 2
        text = (
            f"{text[:half]}\n[... {len(text) - OUTPUT_CAP} characters omitted ...]\n{text[-half:]}"
        )
    return text


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
