"""Ask the host, not Troupe, which processes are alive: ``ps`` reads it independently."""

from __future__ import annotations

import subprocess


def running_in_group(pgid: int) -> list[int]:
    """PIDs of the group's members that are not zombies, according to ``ps``."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,pgid=,stat="], capture_output=True, text=True, check=True
    ).stdout
    members = []
    for line in listing.splitlines():
        pid, group, state = line.split(None, 2)
        if int(group) == pgid and not state.startswith("Z"):
            members.append(int(pid))
    return members
