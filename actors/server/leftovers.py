"""At start, end what a killed predecessor left running, here and on remote hosts.

Every command's process group is written down in the data directory's process
ledger while it may run (:class:`~actors.kernel.processes.ProcessLedger`). Records
whose writer is gone are the leftovers of a Troupe that could not clean up (a
SIGKILL, a crash): their groups get the usual ladder, and a pid that now names
another process is never signalled. Records of another host go to the kinds that
reach hosts (:attr:`environments.kinds.Kind.end_leftovers`).
"""

from __future__ import annotations

import contextlib
import errno
import logging
from pathlib import Path

import trio

from actors.kernel.processes import GroupRecord, ProcessLedger, end_local_leftovers
from actors.store.health import StoreHealth
from environments.builtin_kinds import builtin_kinds
from environments.kinds import Kinds

log = logging.getLogger("troupe.server")


def process_ledger(data_dir: Path) -> ProcessLedger:
    return ProcessLedger(data_dir / "process-groups")


def reporting_ledger(data_dir: Path, health: StoreHealth) -> ReportingLedger:
    """The server's ledger: a record that cannot be written is the store's fault."""
    return ReportingLedger(data_dir / "process-groups", health)


class ReportingLedger(ProcessLedger):
    """The server's ledger: a small file beside the store, so a record that cannot
    be written (a full disk, a read-only or vanished directory) is the store's
    fault, not only a line in the log: the store's health fails with the typed
    ``store_unavailable`` (running inputs stop as interrupted, new ones are
    refused, subscribers are told), and the store's writer probes the ledger's
    directory with its own until both can write again (``store_available``).
    The command itself still runs: a lost record only loses the clean-up after a
    crash, and the interruption ends it soon."""

    def __init__(self, directory: Path, health: StoreHealth) -> None:
        super().__init__(directory)
        self._health = health
        self._token = trio.lowlevel.current_trio_token()

    def _write(self, record: GroupRecord) -> str:
        try:
            return super()._write(record)
        except OSError as error:
            # From trio's thread or the SSH bridge's: the health lives in trio's.
            with contextlib.suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self._health.fail, ledger_fault(self, error), set())
            raise

    def probe(self) -> None:
        """Raise :class:`OSError` unless a record can be written and removed now."""
        temporary = self.directory / ".probe.tmp"
        try:
            temporary.write_bytes(b"{}")
            temporary.unlink()
        except OSError as error:
            raise OSError(ledger_fault(self, error)) from error


def ledger_fault(ledger: ProcessLedger, error: OSError) -> str:
    """One line saying which of the store's files cannot be written, and why."""
    reason = _REASONS.get(error.errno or 0) or error.strerror or type(error).__name__
    return f"the process ledger in {ledger.directory} cannot be written: {reason}"


_REASONS = {
    errno.ENOSPC: "no space left, the disk is full",
    errno.ENOENT: "it is gone (its data directory vanished?)",
    errno.EROFS: "the file system is read-only",
}
"""The store's own words for the faults both meet, so a client reads one story."""


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
