"""asyncio side: the kill path of one host, with capacity commands can never take.

Every kill (a timeout, an abort, a cancelled caller, the environment stopping, the
runtime shutting down, the orphans of a lost link) goes through here. Kills are
batched: while one batch runs, new requests gather for the next, and a batch ends
all its groups together (TERM, grace, KILL, then wait until they are gone), so
sixteen stubborn commands cost one grace period, not sixteen. A batch runs on the
session each connection keeps free for it, or on a fresh connection when no live
one has room. A kill that cannot be delivered (the link is dead or hung) leaves its
groups remembered as orphans, ended as soon as a connection works again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import asyncssh

from actors.kernel import KILL_GRACE
from environments.errors import EnvironmentError_
from environments.shell.scripts import LostCall, RemoteGroup, kill_script
from environments.ssh.connect import LINK_ERRORS

if TYPE_CHECKING:
    from environments.ssh.pool import HostPool, Link

_SHELL = "exec bash --norc --noprofile -s"
Owed = RemoteGroup | LostCall
"""What a kill ends: a known group, or the groups of a call that never reported one."""
_DELIVERY_SLACK = 20.0
"""Seconds a kill batch may take beyond the grace before its link counts as hung."""


class Killer:
    """The groups one host pool started, and the way to end them."""

    def __init__(self, pool: HostPool, grace: float = KILL_GRACE) -> None:
        self.pool = pool
        self.grace = grace
        self._running: dict[RemoteGroup, str | None] = {}
        """Groups started and not known to be over -> their ledger record."""
        self._orphans: set[Owed] = set()
        self._pending: dict[Owed, list[asyncio.Future[bool]]] = {}
        self._worker: asyncio.Task[None] | None = None

    @property
    def running(self) -> frozenset[RemoteGroup]:
        return frozenset(self._running)

    @property
    def orphans(self) -> frozenset[Owed]:
        return frozenset(self._orphans)

    def started(self, group: RemoteGroup) -> None:
        """Track a group the wrapper reported, and write it down in the ledger (if
        any), where a restarted Troupe finds it."""
        ledger, record = self.pool.ledger, None
        if ledger is not None:
            target = str(self.pool.target)
            record = ledger.add_remote(group.pgid, group.start_time, target, self._reach())
        self._running[group] = record

    def finished(self, group: RemoteGroup) -> None:
        """The wrapper saw the group through to its end: forget it."""
        self._forget(group)

    def _forget(self, group: Owed) -> None:
        if not isinstance(group, RemoteGroup):
            return
        record = self._running.pop(group, None)
        if self.pool.ledger is not None and record is not None:
            self.pool.ledger.remove(record)

    def _reach(self) -> dict[str, Any]:
        """How a restarted Troupe gets back to this host (no secrets)."""
        options = self.pool.options

        def listed(value: Any) -> list[str]:
            return [value] if isinstance(value, str) else list(value or ())

        known_hosts = options.known_hosts
        return {
            "target": str(self.pool.target),
            "known_hosts": known_hosts if isinstance(known_hosts, str) else None,
            "client_keys": listed(options.client_keys),
            "config": listed(options.config),
        }

    def remember(self, group: Owed) -> None:
        """A group whose fate is unknown (its link dropped): end it on reconnect. A
        call that never reported its group is remembered by its nonce instead."""
        if isinstance(group, RemoteGroup):
            self._running.setdefault(group, None)
        self._orphans.add(group)

    def link_ready(self) -> None:
        """A connection works: a good moment to end what is owed."""
        if self._orphans:
            orphans, self._orphans = self._orphans, set()
            for group in orphans:
                self._pending.setdefault(group, [])
            self._ensure_worker()

    async def kill(self, groups: Sequence[Owed]) -> bool:
        """End ``groups``; True once done, False if it could not be delivered."""
        if not groups:
            return True
        loop = asyncio.get_running_loop()
        futures = []
        for group in groups:
            future: asyncio.Future[bool] = loop.create_future()
            self._pending.setdefault(group, []).append(future)
            futures.append(future)
        self._ensure_worker()
        results = await asyncio.shield(asyncio.gather(*futures))
        return all(results)

    async def end_all(self, grace: float | None = None) -> bool:
        """End every group this pool started that may still run (shutdown, cleanup)."""
        if grace is not None:
            self.grace = grace
        owed: set[Owed] = {*self._running, *self._orphans}
        return await self.kill(sorted(owed, key=_order))

    def _ensure_worker(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work())

    async def _work(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, {}
            delivered = await self._deliver(sorted(batch, key=_order))
            for group, futures in batch.items():
                if delivered:
                    self._orphans.discard(group)
                    self._forget(group)
                else:
                    self._orphans.add(group)
                for future in futures:
                    if not future.done():
                        future.set_result(delivered)

    def _free_link(self) -> Link | None:
        for link in self.pool.live_links():
            if link.sessions < link.limit:
                return link
        return None

    async def _deliver(self, owed: list[Owed]) -> bool:
        groups = [g for g in owed if isinstance(g, RemoteGroup)]
        calls = [c for c in owed if isinstance(c, LostCall)]
        script = kill_script(groups, self.grace, calls)
        try:
            link = self._free_link() or await self.pool.new_link()
            try:
                await self._run_bounded(link, script)
            except asyncssh.ChannelOpenError:
                # sshd refused the session (it may still count one it is closing, or
                # the link just went): a connection of the kill path's own has room.
                await self._run_bounded(await self.pool.new_link(), script)
        except (EnvironmentError_, *LINK_ERRORS):
            return False
        except _Hung:
            return False
        return True

    async def _run_bounded(self, link: Link, script: str) -> None:
        """Run the kill script on ``link``; a link that does not finish it in time is
        hung: its commands fail now and are owed a kill."""
        link.kills += 1
        try:
            await asyncio.wait_for(self._run(link, script), self.grace + _DELIVERY_SLACK)
        except TimeoutError:
            link.dead = True
            link.connection.abort()
            raise _Hung from None
        finally:
            link.kills -= 1

    @staticmethod
    async def _run(link: Link, script: str) -> None:
        process: Any = await link.connection.create_process(_SHELL, encoding=None)
        link.confirmed += 1
        try:
            await process.communicate(script.encode())
            # sshd frees the session only once both sides have closed it; until then
            # it still counts it, and would refuse the next batch's session.
            process.close()
            await process.wait_closed()
        finally:
            process.close()
            link.confirmed -= 1


class _Hung(Exception):
    """The kill script did not finish in time on its link."""


def _order(group: Owed) -> tuple[int, int, str]:
    if isinstance(group, LostCall):
        return -1, 0, group.nonce
    return group.pgid, group.start_time or 0, ""
