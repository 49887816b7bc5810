"""The server's execution environments: a default one for its own directory, one
per working directory asked for, and environments added by name (of any kind).

Environments are started through the registry of kinds
(:mod:`environments.kinds`); this module never names a kind. The server's own
directories use the registry's machine kind (``/environments/local`` and
``/environments/local-N``); an added environment's address is its kind's
(``/environments/<kind>/<name>``). Added environments are stored as
``(name, kind, spec)`` and added again when the server starts.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import msgspec
import trio

from actors.kernel import ActorRef, Rejection, Runtime, UnknownAddressError
from actors.kernel.processes import ProcessLedger
from actors.server.env_probe import probe_all
from actors.store import Store
from environments.builtin_kinds import builtin_kinds
from environments.kinds import ENVIRONMENTS, AlreadyExists, KindContext, Kinds
from protocol.environment_specs import EnvironmentSpec
from protocol.wire import EnvironmentSummary

log = logging.getLogger("troupe.server")

RESOLVED_FRESH_FOR = 1.0
"""Seconds a resolved working directory is reused without asking the file system
again: a burst of sessions on one directory costs one trip to a worker thread."""
RESOLVED_KEPT = 256


class EnvironmentNotFound(Rejection):
    code = "not_found"


class EnvironmentRefused(Rejection):
    code = "invalid_request"


def _resolve_dir(path: Path) -> tuple[Path, bool]:
    """The directory's real path, and whether it is a directory."""
    resolved = path.resolve()
    return resolved, resolved.is_dir()


class Environments:
    """Finds or starts the environment a session or a request names."""

    def __init__(
        self,
        runtime: Runtime,
        default_dir: Path,
        store: Store | None = None,
        ledger: ProcessLedger | None = None,
        kinds: Kinds | None = None,
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.ledger = ledger
        """Where commands' process groups are recorded (ended after a crash)."""
        self.kinds = kinds or builtin_kinds()
        self.default_dir = Path(os.path.realpath(default_dir))
        self._local: dict[Path, str] = {}
        self._resolved: dict[str, tuple[float, Path]] = {}
        """Working directories as asked -> (when resolved, real path), while fresh."""
        self._added: dict[str, str] = {}
        """Names -> addresses of environments added by name."""
        self._actors: dict[str, object] = {}
        """Environment actors of this machine by address, to ask which commands they run."""
        self.owner = f"server:{self.default_dir}"
        """The owner label of what this server's environments create outside it
        (containers; see environments.docker.labels)."""
        self._spawning = trio.Lock()
        """Held from choosing a local environment's name until it is registered:
        two sessions created at once for new directories would otherwise pick the
        same ``local-N`` (or start two environments for one directory)."""

    @property
    def context(self) -> KindContext:
        return KindContext(self.runtime, self.ledger, self.owner, self._real, self._started)

    def _started(self, address: str, actor: object) -> None:
        self._actors[address] = actor

    async def _real(self, directory: str) -> str:
        return str(await self._resolve(directory))

    async def local(self, working_dir: str | os.PathLike[str] | None = None) -> ActorRef:
        """The environment of this machine for ``working_dir`` (the default when None)."""
        path = await self._resolve(str(working_dir or self.default_dir))
        machine = self.kinds.machine.machine
        assert machine is not None
        address = self._local.get(path)
        if address is not None:  # the common case, with no lock to take (each start asks)
            with contextlib.suppress(UnknownAddressError):
                return self.runtime.ref(address)
        async with self._spawning:
            address = self._local.get(path)
            if address is not None:
                try:
                    return self.runtime.ref(address)
                except UnknownAddressError:
                    pass
            base = machine.address
            address = base if path == self.default_dir else f"{base}-{len(self._local) + 1}"
            ref = await machine.start_at(address, machine.spec(str(path)), self.context)
            self._local[path] = ref.address
            return ref

    def running_groups(self) -> frozenset[int]:
        """The process groups every live environment of this machine is running now."""
        live = set(self.runtime.addresses())
        groups: set[int] = set()
        for address, environment in list(self._actors.items()):
            running = getattr(environment, "running_groups", None)
            if address in live and running is not None:
                groups |= running()
        return frozenset(groups)

    async def _resolve(self, asked: str) -> Path:
        """The real path of an existing directory (``EnvironmentRefused`` otherwise),
        from a worker thread, or reused when it was resolved within the last second."""
        now = trio.current_time()
        cached = self._resolved.get(asked)
        if cached is not None and now - cached[0] < RESOLVED_FRESH_FOR:
            return cached[1]
        try:
            path, is_dir = await trio.to_thread.run_sync(_resolve_dir, Path(asked))
        except (OSError, ValueError) as error:  # too long, not allowed, a NUL byte
            raise EnvironmentRefused(f"working directory {asked[:200]!r}: {error}") from None
        if not is_dir:
            raise EnvironmentRefused(f"working directory {path} does not exist")
        if len(self._resolved) >= RESOLVED_KEPT:
            self._resolved = {
                key: entry
                for key, entry in self._resolved.items()
                if now - entry[0] < RESOLVED_FRESH_FOR
            }
        self._resolved[asked] = (trio.current_time(), path)
        return path

    def resolve(self, name: str) -> ActorRef:
        """An environment by address (``/environments/...``) or by the name it was added as."""
        address = name if name.startswith("/") else self._added.get(name, f"{ENVIRONMENTS}{name}")
        if not address.startswith(ENVIRONMENTS) or address in self.kinds.internal():
            raise EnvironmentNotFound(f"{name} is not an environment")
        try:
            return self.runtime.ref(address)
        except UnknownAddressError:
            raise EnvironmentNotFound(f"no environment at {address}") from None

    async def add(
        self, name: str, spec: EnvironmentSpec, *, restoring: bool = False
    ) -> EnvironmentSummary:
        """Add an environment under ``name`` (``already_exists`` if the name is taken);
        it is stored, and comes back when the server starts again."""
        kind = self.kinds.of(spec)
        kind.check(spec)
        if self._added.get(name) in self.runtime.addresses():
            raise AlreadyExists(f"an environment named {name} already exists")
        ref = await kind.start(name, spec, self.context)
        self._added[name] = ref.address
        if self.store is not None and not restoring:
            self.store.put_environment(name, kind.name, msgspec.json.encode(spec))
        return EnvironmentSummary(ref.address, kind.name)

    async def restore(self) -> None:
        """Add again every environment the store remembers (at server start); kinds
        import their libraries only when one of theirs is restored."""
        if self.store is None:
            return
        for row in await self.store.environments():
            try:
                await self.add(row.name, self.kinds.decode(row.kind, row.spec), restoring=True)
            except Exception as error:  # one bad row must not keep the server down
                log.error("environment %s (%s) not restored: %s", row.name, row.kind, error)

    async def remove(self, name: str) -> str:
        ref = self.resolve(name)
        if ref.address == self._local.get(self.default_dir):
            raise EnvironmentRefused("the default environment cannot be removed")
        await self.runtime.stop(ref)
        for added in [k for k, v in self._added.items() if v == ref.address]:
            del self._added[added]
            if self.store is not None:
                self.store.delete_environment(added)
        self._local = {k: v for k, v in self._local.items() if v != ref.address}
        self._actors.pop(ref.address, None)
        return ref.address

    def summaries(self) -> list[EnvironmentSummary]:
        internal = self.kinds.internal()
        found = []
        for address in self.runtime.addresses():
            if not address.startswith(ENVIRONMENTS) or address in internal:
                continue
            kind = self.kinds.kind_at(address) or "other"
            found.append(EnvironmentSummary(address=address, kind=kind))
        return found

    async def checked_summaries(self) -> list[EnvironmentSummary]:
        """Every environment, probed (see :mod:`actors.server.env_probe`)."""
        pairs: list[tuple[ActorRef, EnvironmentSummary]] = []
        for summary in self.summaries():
            try:
                pairs.append((self.resolve(summary.address), summary))
            except EnvironmentNotFound:
                continue  # stopped since it was listed
        return await probe_all(pairs)
