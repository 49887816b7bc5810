"""Helpers for the environment tests: host-side process checks and an output sink."""

from __future__ import annotations

import subprocess

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
