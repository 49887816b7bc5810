"""At start, end what a killed predecessor left running, here and on remote hosts.

Every command's process group is written down in the data directory's process
ledger while it may run (:class:`~actors.kernel.processes.ProcessLedger`). Records
whose writer is gone are the leftovers of a Troupe that could not clean up (a
SIGKILL, a crash): their groups get the usual ladder, and a pid that now names
another process is never signalled. Records of another host go to the kinds that
reach hosts (:attr:`environments.kinds.Kind.end_leftovers`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from actors.kernel.processes import ProcessLedger, end_local_leftovers
from environments.builtin_kinds import builtin_kinds
from environments.kinds import Kinds

log = logging.getLogger("troupe.server")


def process_ledger(data_dir: Path) -> ProcessLedger:
    return ProcessLedger(data_dir / "process-groups")


async def end_leftover_groups(ledger: ProcessLedger, kinds: Kinds | None = None) -> None:
    records = await trio.to_thread.run_sync(ledger.leftovers)
    local = [(key, record) for key, record in records if record.host is None]
    remote = [(key, record) for key, record in records if record.host is not None]
    async with trio.open_nursery() as nursery:
        if local:
            nursery.start_soon(_end_local, ledger, local)
        if remote:
            for kind in kinds or builtin_kinds():
                if kind.end_leftovers is not None:
                    nursery.start_soon(kind.end_leftovers, ledger, remote)


async def _end_local(ledger: ProcessLedger, records: list) -> None:  # type: ignore[type-arg]
    ended = await end_local_leftovers(ledger, records)
    if ended:
        log.info("ended %d local process group(s) a previous server left running", ended)
