"""Ending OS process groups for good: SIGTERM, a grace period, then SIGKILL.

A command run for a model may trap SIGTERM, fork background children, or leave
grandchildren holding pipes. Killing the leader's PID is not enough, so every
command runs as the leader of its own process group and is ended by group.

Liveness is read from ``/proc`` where it exists: a zombie still counts as a group
member for ``killpg(pgid, 0)`` until someone reaps it, and in containers PID 1 often
never does, so "is anything of this group still running" needs the process state.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from pathlib import Path

import trio

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL, as the design's shutdown ladder asks."""

_POLL_INTERVAL = 0.05
_PROC = Path("/proc")


def signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when no process of it exists any more."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed credentials (setuid); nothing more we are allowed to do.
        return False
    return True


def _stat_fields(pid_dir: Path) -> tuple[str, int] | None:
    try:
        raw = (pid_dir / "stat").read_bytes()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    rest = raw[raw.rfind(b")") + 2 :].split()
    return rest[0].decode(), int(rest[2])


def live_groups(pgids: Iterable[int]) -> set[int]:
    """Those of ``pgids`` that still have a member which is not a zombie."""
    # Fast path: a group with no member at all (not even a zombie) is gone.
    wanted = {pgid for pgid in pgids if signal_group(pgid, 0)}
    if not wanted or not _PROC.is_dir():
        return wanted
    alive: set[int] = set()
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is None:
            continue
        state, pgrp = fields
        if pgrp in wanted and state not in ("Z", "X"):
            alive.add(pgrp)
            if alive == wanted:
                break
    return alive


async def wait_groups_gone(pgids: set[int], deadline: float) -> set[int]:
    """Poll until every group is gone or ``deadline`` (trio clock) passes; return survivors."""
    remaining = set(pgids)
    while remaining:
        remaining = await trio.to_thread.run_sync(live_groups, remaining)
        if not remaining or trio.current_time() >= deadline:
            break
        await trio.sleep(_POLL_INTERVAL)
    return remaining


async def terminate_groups(pgids: Iterable[int], grace: float = KILL_GRACE) -> None:
    """SIGTERM every group, wait up to ``grace`` seconds, SIGKILL whatever is left.

    Returns once nothing of the groups is running (or, after SIGKILL, a short bounded
    wait has passed). Safe to call on groups that are already gone.
    """
    targets = {pgid for pgid in pgids if signal_group(pgid, signal.SIGTERM)}
    if not targets:
        return
    survivors = await wait_groups_gone(targets, trio.current_time() + grace)
    for pgid in survivors:
        signal_group(pgid, signal.SIGKILL)
    if survivors:
        await wait_groups_gone(survivors, trio.current_time() + 1.0)
