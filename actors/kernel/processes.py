"""Ending OS process groups for good: SIGTERM, a grace period, then SIGKILL.

A command run for a model may trap SIGTERM, fork background children, or leave
grandchildren holding pipes. Killing the leader's PID is not enough, so every
command runs as the leader of its own process group and is ended by group.

Groups are also written down in a :class:`ProcessLedger` (where the host keeps
one), so that what a killed Troupe left running is ended by the next one.

Liveness is read from ``/proc`` where it exists: a zombie still counts as a group
member for ``killpg(pgid, 0)`` until someone reaps it, and in containers PID 1 often
never does, so "is anything of this group still running" needs the process state.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import trio

log = logging.getLogger("troupe.actors")

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


def process_start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or None if it does not exist.

    With the pid it names one process for good: a pid the kernel hands out again
    belongs to a process with another start time.
    """
    fields = _stat_fields_full(_PROC / str(pid))
    if fields is None or len(fields) <= _START_TIME_FIELD:
        return None
    return int(fields[_START_TIME_FIELD])


_START_TIME_FIELD = 19
"""Index of ``starttime`` (field 22 of /proc/PID/stat) among the fields after comm."""


def _stat_fields_full(pid_dir: Path) -> list[bytes] | None:
    try:
        raw = (pid_dir / "stat").read_bytes()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2 :].split()


def group_is_ours(pgid: int, start_time: int | None) -> bool:
    """False when pid ``pgid`` now names another process than the recorded leader.

    A group id is never handed to a new process while any member of the group
    lives, so a leader that is gone (or an unknown start time) means "still ours".
    """
    if start_time is None:
        return True
    now = process_start_time(pgid)
    return now is None or now == start_time


class GroupRecord(msgspec.Struct, frozen=True):
    """One process group Troupe started, as written down in a :class:`ProcessLedger`."""

    pgid: int
    start_time: int | None
    owner_pid: int
    """The Troupe process that started it; its records are left alone while it lives."""
    owner_start: int | None
    host: str | None = None
    """None: this machine; otherwise where the group runs (an SSH target)."""
    reach: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])
    """How to get back to ``host`` (opaque to the kernel; no secrets)."""


class ProcessLedger:
    """Where every started process group is written down, one small file each, so that
    a Troupe killed with SIGKILL leaves a list its successor can end.

    A record is written (renamed into place, so never half-written) when a group
    starts and removed when the group is known to be over. Thread-safe: each record
    is its own file, and the SSH side writes from the bridge's thread.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._owner_pid = os.getpid()
        self._owner_start = process_start_time(self._owner_pid)
        self._serial = itertools.count()

    def add_local(self, pgid: int) -> str | None:
        """Record a group started on this machine; its key, or None if the record
        could not be written (the command still runs: losing the record only loses
        the clean-up after a crash)."""
        return self._try_write(GroupRecord(pgid, process_start_time(pgid), *self._owner))

    def add_remote(
        self, pgid: int, start_time: int | None, host: str, reach: dict[str, Any]
    ) -> str | None:
        """Record a group started on ``host``; see :meth:`add_local`."""
        return self._try_write(GroupRecord(pgid, start_time, *self._owner, host, reach))

    def _try_write(self, record: GroupRecord) -> str | None:
        try:
            return self._write(record)
        except OSError as exc:
            log.warning(
                "cannot record process group %d in %s: %s", record.pgid, self.directory, exc
            )
            return None

    @property
    def _owner(self) -> tuple[int, int | None]:
        return self._owner_pid, self._owner_start

    def _write(self, record: GroupRecord) -> str:
        key = f"{self._owner_pid}-{next(self._serial)}.json"
        temporary = self.directory / f".{key}.tmp"
        temporary.write_bytes(msgspec.json.encode(record))
        os.replace(temporary, self.directory / key)
        return key

    def remove(self, key: str) -> None:
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            (self.directory / key).unlink()

    def leftovers(self) -> list[tuple[str, GroupRecord]]:
        """Records of Troupe processes that are gone (killed before they could clean up)."""
        found: list[tuple[str, GroupRecord]] = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                record = msgspec.json.decode(path.read_bytes(), type=GroupRecord)
            except (OSError, msgspec.DecodeError):
                continue
            owner_alive = record.owner_start is not None and (
                process_start_time(record.owner_pid) == record.owner_start
            )
            if not owner_alive:
                found.append((path.name, record))
        return found


async def end_local_leftovers(ledger: ProcessLedger, records: list[tuple[str, GroupRecord]]) -> int:
    """End the local groups a dead predecessor recorded (SIGTERM, grace, SIGKILL);
    a pid that now names another process is never signalled. Returns how many ran."""
    ours = {record.pgid for _, record in records if group_is_ours(record.pgid, record.start_time)}
    running = await trio.to_thread.run_sync(live_groups, ours)
    await terminate_groups(running)
    for key, _ in records:
        ledger.remove(key)
    return len(running)
