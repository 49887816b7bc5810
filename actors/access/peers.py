"""Which local process is at the other end of a connection, and whether a session's
own commands started it.

The token is out of the model's reach (denied paths, the sandbox), but where the
sandbox is off a command could still find it somewhere, connect, and answer its
own session's approval. So an approval answer (or a config change) from a loopback
connection is checked: the peer's pid comes from the kernel (``/proc/net/tcp`` and
``tcp6`` give the socket's inode for the connection's address pair, a scan of
``/proc/*/fd`` the processes holding it), then each one's ancestry, process group
and session are compared with the process groups this server's local environments
are running (every command leads its own group and session). A match is refused.
Linux only; elsewhere (no ``/proc``) nothing is found and nothing is refused.
"""

from __future__ import annotations

import ipaddress
import os
import struct
from collections.abc import Iterable

import msgspec

PROC = "/proc"


class Peer(msgspec.Struct, frozen=True):
    """One TCP connection as the server sees it: its own end and the client's."""

    local: tuple[str, int]
    remote: tuple[str, int]

    @property
    def loopback(self) -> bool:
        try:
            return ipaddress.ip_address(self.remote[0].split("%")[0]).is_loopback or (
                self.remote[0].startswith("::ffff:127.")
            )
        except ValueError:
            return False


def _proc_hex(host: str, port: int) -> str:
    """An address as ``/proc/net/tcp{,6}`` writes it: the address in 32-bit words of
    host byte order (little-endian here), then the port, in hex."""
    packed = ipaddress.ip_address(host.split("%")[0]).packed
    words = struct.unpack(f"<{len(packed) // 4}I", packed)
    return "".join(f"{word:08X}" for word in words) + f":{port:04X}"


def _forms(host: str, port: int) -> set[str]:
    """Every form the kernel may list this end under (IPv4 in tcp6 is mapped)."""
    found = {_proc_hex(host, port)}
    address = ipaddress.ip_address(host.split("%")[0])
    if isinstance(address, ipaddress.IPv4Address):
        found.add(_proc_hex(f"::ffff:{host}", port))
    elif address.ipv4_mapped is not None:
        found.add(_proc_hex(str(address.ipv4_mapped), port))
    return found


def socket_inodes(peer: Peer) -> set[int]:
    """The inodes of the client's socket(s) for this connection: the entries whose
    local end is the client's and whose remote end is the server's."""
    client, server = _forms(*peer.remote), _forms(*peer.local)
    inodes: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"{PROC}/net/{table}") as file:
                next(file, None)
                for line in file:
                    fields = line.split()
                    if len(fields) > 9 and fields[1] in client and fields[2] in server:
                        inode = int(fields[9])
                        if inode:
                            inodes.add(inode)
        except OSError:
            continue
    return inodes


def pids_holding(inodes: set[int]) -> set[int]:
    """Processes with one of these sockets open (those of other users are skipped:
    their ``fd`` directories cannot be read, and they are not the model's)."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    found: set[int] = set()
    if not wanted:
        return found
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            for fd in os.scandir(f"{PROC}/{entry.name}/fd"):
                try:
                    if os.readlink(fd.path) in wanted:
                        found.add(int(entry.name))
                        break
                except OSError:
                    continue
        except OSError:
            continue
    return found


def peer_pids(peer: Peer) -> set[int]:
    return pids_holding(socket_inodes(peer))


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, pgid, sid) of a live process."""
    try:
        with open(f"{PROC}/{pid}/stat") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name may hold spaces and ')'
    return int(fields[1]), int(fields[2]), int(fields[3])


def started_by(pid: int, groups: Iterable[int], stop_at: int) -> int | None:
    """The command group ``pid`` belongs to or descends from, if any: itself or an
    ancestor (up to ``stop_at``, this server) leads one of ``groups`` or is in one
    (same process group or session, which survive a parent's exit)."""
    leaders = set(groups)
    if not leaders:
        return None
    seen: set[int] = set()
    while pid > 1 and pid != stop_at and pid not in seen:
        seen.add(pid)
        stat = _stat(pid)
        if stat is None:
            return None
        ppid, pgid, sid = stat
        for mark in (pid, pgid, sid):
            if mark in leaders:
                return mark
        pid = ppid
    return None


def command_peer(peer: Peer, groups: Iterable[int]) -> tuple[int, int] | None:
    """(peer pid, command group) when a loopback peer was started by one of
    ``groups``; None for anything else (a user's client, a browser, this process)."""
    if not peer.loopback:
        return None
    groups = frozenset(groups)
    if not groups:
        return None
    me = os.getpid()
    for pid in sorted(peer_pids(peer)):
        if pid == me:
            continue
        group = started_by(pid, groups, me)
        if group is not None:
            return pid, group
    return None
