"""Labels on everything Troupe creates in Docker, and the sweep of a crash's orphans.

Every container carries ``troupe.managed``, the owner (one Troupe state directory,
or whatever the embedder names) and the creating process as ``host:pid:start``
(the start time in clock ticks, so a reused pid is not taken for the creator). A
process that dies without removing its containers (SIGKILL, power loss) leaves them
labelled; the next environment of the same owner on the same host finds those whose
creator no longer runs and removes them: the labels are the crash ledger, kept by
the daemon itself.
"""

from __future__ import annotations

import os
import socket

from environments.docker.api import DockerAPI

MANAGED = "troupe.managed"
OWNER = "troupe.owner"
PROCESS = "troupe.process"


def _start_ticks(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def process_label(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or ''}"


def container_labels(owner: str) -> dict[str, str]:
    return {MANAGED: "1", OWNER: owner, PROCESS: process_label()}


def creator_gone(label: str) -> bool:
    """Whether the process named by a ``host:pid:start`` label has ended (only
    judged for this host: another host's creator may be alive)."""
    host, _, rest = label.partition(":")
    pid, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return _start_ticks(int(pid)) != (start or None) or _start_ticks(int(pid)) is None


async def remove_orphans(api: DockerAPI, owner: str) -> list[str]:
    """Remove ``owner``'s containers whose creating process is gone; their ids."""
    removed: list[str] = []
    for container in await api.containers({MANAGED: "1", OWNER: owner}):
        label = (container.get("Labels") or {}).get(PROCESS, "")
        if creator_gone(label):
            await api.remove_container(container["Id"])
            removed.append(container["Id"])
    return removed
