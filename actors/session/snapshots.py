"""Environment snapshots shared by the sessions that start together.

A snapshot (platform, git state, project documents) costs a shell and several git
processes. Sessions on the same environment (one per working directory) that take
it at about the same time share one: the first asks, the others wait for its
answer (single flight), and the answer is reused while it is fresh. A session
takes its snapshot at its first input, not when it starts, so a session that never
gets input costs no process at all.
"""

from __future__ import annotations

import msgspec
import trio

from actors.kernel import ActorRef
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot, take_snapshot
from protocol.environment import Describe

FRESH_FOR = 30.0
"""Seconds a snapshot is shared; the git state it shows is "at session start"."""


class _Flight(msgspec.Struct):
    done: trio.Event = msgspec.field(default_factory=trio.Event)
    snapshot: EnvironmentSnapshot | None = None
    taken_at: float = 0.0


class SnapshotCache:
    """Snapshots by (environment address, project document names), single flight."""

    def __init__(self, fresh_for: float = FRESH_FOR) -> None:
        self.fresh_for = fresh_for
        self._flights: dict[tuple[str, tuple[str, ...]], _Flight] = {}
        self.taken = 0
        """Snapshots actually taken (the rest were shared)."""
        self._roots: dict[str, str] = {}

    async def working_directory(self, environment: ActorRef) -> str:
        """The environment's working directory, asked once per environment: it is
        fixed when the environment is made, and sessions need it at start."""
        root = self._roots.get(environment.address)
        if root is None:
            root = (await environment.ask(Describe(sandbox=False))).working_directory
            self._roots[environment.address] = root
        return root

    async def get(self, environment: ActorRef, profile: ProviderProfile) -> EnvironmentSnapshot:
        """The environment's snapshot: a fresh one shared, or one taken now. A failed
        attempt is not shared: the caller's error is raised, waiters try again."""
        key = (environment.address, tuple(profile.project_doc_files))
        while True:
            flight = self._flights.get(key)
            if flight is None or (
                flight.done.is_set()
                and (
                    flight.snapshot is None
                    or trio.current_time() - flight.taken_at > self.fresh_for
                )
            ):
                return await self._take(key, environment, profile)
            await flight.done.wait()
            if flight.snapshot is not None:
                return flight.snapshot

    async def _take(
        self, key: tuple[str, tuple[str, ...]], environment: ActorRef, profile: ProviderProfile
    ) -> EnvironmentSnapshot:
        flight = self._flights[key] = _Flight()
        try:
            flight.snapshot = await take_snapshot(environment, profile)
            flight.taken_at = trio.current_time()
            self.taken += 1
            return flight.snapshot
        finally:
            if flight.snapshot is None and self._flights.get(key) is flight:
                del self._flights[key]
            flight.done.set()
