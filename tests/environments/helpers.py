"""Helpers for the environment tests: host-side process checks and an output sink."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import trio

from actors.kernel import Actor, handler
from protocol.environment import ExecOutput


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are running (not zombies), according to ``ps`` on the host."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,stat="], capture_output=True, text=True, check=True
    ).stdout
    running = {
        int(pid)
        for pid, state in (line.split(None, 1) for line in listing.splitlines())
        if not state.startswith("Z")
    }
    return [pid for pid in pids if pid in running]


def survivors(marker: str) -> list[str]:
    """Processes on this host whose command line holds ``marker`` (zombies aside).
    Sandboxed commands live in a PID namespace of their own, so the pids they see
    are not the host's: a test finds what they started by a marker instead."""
    listing = subprocess.run(
        ["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    return [
        line
        for line in listing.splitlines()
        if marker in line and not line.lstrip().startswith("Z") and "ps -ww" not in line
    ]


def running_in(directory: Path) -> list[int]:
    """Host pids of the live processes whose working directory is in ``directory``:
    how a test finds the commands a session started there, sandboxed or not."""
    root = os.path.realpath(directory)
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd == root or cwd.startswith(root + "/")):
            found.append(int(entry.name))
    return found


def command_group(directory: Path) -> int | None:
    """The host process group of the command a session runs in ``directory``: the
    first-started group leader working there (the sandbox launcher, or the shell
    itself without a sandbox). A command's own ``$$`` is no use for this under the
    sandbox: it is its PID namespace's number, which on the host names another
    process, one a test must never signal."""
    leaders = [pid for pid in running_in(directory) if _group_of(pid) == pid]
    return min(leaders) if leaders else None


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


class OutputSink(Actor):
    """Collects ExecOutput deltas and lets a test wait for a piece of text."""

    def __init__(self) -> None:
        self.text = ""
        self.changed = trio.Event()

    @handler
    async def on_output(self, message: ExecOutput) -> None:
        self.text += message.text
        self.changed.set()
        self.changed = trio.Event()

    async def wait_for(self, needle: str) -> None:
        while needle not in self.text:
            await self.changed.wait()
