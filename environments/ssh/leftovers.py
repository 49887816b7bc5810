"""Ending the remote process groups a killed Troupe left running, from its ledger.

Each host is reached with what the record kept (target, known_hosts, key and config
paths; never a passphrase), over a connection of its own, and its groups are ended
with the kill path's script: a pid that now names another process (checked by its
start time) is left alone. Records of a host that cannot be reached stay for the
next start.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from actors.kernel import KILL_GRACE
from actors.kernel.processes import GroupRecord, ProcessLedger
from environments.errors import EnvironmentError_
from environments.shell.scripts import RemoteGroup
from environments.ssh.asyncio_loop import AsyncioLoop
from environments.ssh.connect import ConnectOptions
from environments.ssh.pool import HostPool
from environments.ssh.target import parse_target

log = logging.getLogger("troupe.environments")

_HOST_BOUND = KILL_GRACE + 30.0


async def end_remote_leftovers(
    ledger: ProcessLedger, records: list[tuple[str, GroupRecord]]
) -> None:
    """End every recorded remote group, host by host in parallel."""
    by_host: dict[str, list[tuple[str, GroupRecord]]] = {}
    for key, record in records:
        by_host.setdefault(repr(sorted(record.reach.items())), []).append((key, record))
    loop = AsyncioLoop("troupe-leftovers")
    loop.start()
    try:
        async with trio.open_nursery() as nursery:
            for host_records in by_host.values():
                nursery.start_soon(_end_on_host, loop, ledger, host_records)
    finally:
        await loop.stop()


async def _end_on_host(
    loop: AsyncioLoop, ledger: ProcessLedger, records: list[tuple[str, GroupRecord]]
) -> None:
    reach = records[0][1].reach
    groups = [RemoteGroup(record.pgid, record.start_time) for _, record in records]
    delivered = False
    try:
        pool = HostPool(parse_target(reach["target"]), _options(reach))
        with trio.move_on_after(_HOST_BOUND):
            delivered = await loop.run(_kill(pool, groups))
    except (EnvironmentError_, KeyError) as exc:
        log.warning("cannot end groups left on %s: %s", reach.get("target"), exc)
    if delivered:
        for key, _ in records:
            ledger.remove(key)
        log.info("ended %d process group(s) left on %s", len(groups), reach["target"])


def _options(reach: dict[str, Any]) -> ConnectOptions:
    return ConnectOptions(
        known_hosts=reach.get("known_hosts") or (),
        client_keys=tuple(reach.get("client_keys") or ()),
        config=tuple(reach.get("config") or ()),
    )


async def _kill(pool: HostPool, groups: list[RemoteGroup]) -> bool:
    try:
        return await pool.kill(groups)
    finally:
        await pool.close(0)
