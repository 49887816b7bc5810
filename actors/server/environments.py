"""The server's execution environments: a default local one, one per working
directory asked for, and SSH hosts added over the wire.

Local environments live at ``/environments/local`` (the server's working
directory) and ``/environments/local-N``; SSH hosts at ``/environments/ssh/<name>``
under one SSH bridge started on first use.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import msgspec
import trio

from actors.kernel import ActorRef, Rejection, Runtime, UnknownAddressError
from actors.kernel.processes import ProcessLedger
from actors.server.env_probe import probe_all
from actors.store import Store
from environments.local import LocalEnvironment
from protocol.environment import AddSSHHost
from protocol.wire import AddDockerEnvironment, EnvironmentSummary

log = logging.getLogger("troupe.server")

SSH_BRIDGE = "/environments/ssh"
DOCKER_PREFIX = "/environments/docker/"
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
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.ledger = ledger
        """Where commands' process groups are recorded (ended after a crash)."""
        self.default_dir = Path(os.path.realpath(default_dir))
        self._local: dict[Path, str] = {}
        self._resolved: dict[str, tuple[float, Path]] = {}
        """Working directories as asked -> (when resolved, real path), while fresh."""
        self._added: dict[str, str] = {}
        """SSH names -> addresses of hosts added over the wire."""
        self._locals: dict[str, LocalEnvironment] = {}
        """The local environments by address, to ask which commands they run."""
        self.docker_owner = f"server:{self.default_dir}"
        """The owner label of this server's containers (see environments.docker.labels)."""
        self._spawning = trio.Lock()
        """Held from choosing a local environment's name until it is registered:
        two sessions created at once for new directories would otherwise pick the
        same ``local-N`` (or start two environments for one directory)."""

    async def local(self, working_dir: str | os.PathLike[str] | None = None) -> ActorRef:
        """The local environment for ``working_dir`` (the default when None)."""
        path = await self._resolve(str(working_dir or self.default_dir))
        async with self._spawning:
            address = self._local.get(path)
            if address is not None:
                try:
                    return self.runtime.ref(address)
                except UnknownAddressError:
                    pass
            name = "local" if path == self.default_dir else f"local-{len(self._local) + 1}"
            environment = LocalEnvironment(path, ledger=self.ledger)
            ref = await self.runtime.spawn(environment, name=f"environments/{name}")
            self._local[path] = ref.address
            self._locals[ref.address] = environment
            return ref

    def running_groups(self) -> frozenset[int]:
        """The process groups every live local environment is running now."""
        live = set(self.runtime.addresses())
        groups: set[int] = set()
        for address, environment in list(self._locals.items()):
            if address in live:
                groups |= environment.running_groups()
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
        """An environment by address (``/environments/...``) or by SSH host name."""
        address = name if name.startswith("/") else self._added.get(name, f"/environments/{name}")
        if not address.startswith("/environments/") or address == SSH_BRIDGE:
            raise EnvironmentNotFound(f"{name} is not an environment")
        try:
            return self.runtime.ref(address)
        except UnknownAddressError:
            raise EnvironmentNotFound(f"no environment at {address}") from None

    async def add_ssh(self, request: AddSSHHost, *, restoring: bool = False) -> ActorRef:
        """Add an SSH host under its name (``already_exists`` if the name is taken);
        it is stored, and comes back when the server starts again."""
        from actors.server.ssh_hosts import (
            BRIDGE_RESTARTS,
            AlreadyExists,
            RestoringSSHBridge,
            StoredSSHHost,
        )
        from actors.server.validation import check_ssh_name
        from environments.ssh.target import parse_target

        check_ssh_name(request.name)
        try:
            parse_target(request.target)  # refused here, before it reaches the bridge
        except ValueError as error:
            raise EnvironmentRefused(f"invalid target {request.target!r}: {error}") from None
        if self._added.get(request.name) in self.runtime.addresses():
            raise AlreadyExists(f"an SSH environment named {request.name} already exists")
        try:
            bridge = self.runtime.ref(SSH_BRIDGE)
        except UnknownAddressError:
            bridge = await self.runtime.spawn(
                RestoringSSHBridge(ledger=self.ledger),
                name="environments/ssh",
                restart=BRIDGE_RESTARTS,
            )
        ref: ActorRef = await bridge.ask(request, timeout=60)
        self._added[request.name] = ref.address
        if self.store is not None and not restoring:
            stored = msgspec.json.encode(StoredSSHHost.of(request))
            self.store.put_ssh_environment(request.name, stored)
        return ref

    async def add_docker(self, request: AddDockerEnvironment) -> ActorRef:
        """Add a Docker environment under its name (``already_exists`` if taken). Its
        containers carry this server's owner label, so a crashed server's are swept
        by the next one's first container. Not stored: it is added again by whoever
        needs it (``troupe run --environment docker:IMAGE`` does)."""
        from actors.server.ssh_hosts import AlreadyExists
        from environments.docker.environment import DockerEnvironment

        workspace = await self._resolve(request.workspace)
        address = f"{DOCKER_PREFIX}{request.name}"
        if address in self.runtime.addresses():
            raise AlreadyExists(f"a Docker environment named {request.name} already exists")
        environment = DockerEnvironment(
            request.image,
            workspace=str(workspace),
            copy_workspace=request.copy_workspace,
            user=request.user,
            cpus=request.cpus,
            memory_bytes=request.memory_bytes,
            pids_limit=request.pids_limit,
            network=request.network,
            docker_host=request.docker_host,
            owner=self.docker_owner,
        )
        return await self.runtime.spawn(environment, name=address.removeprefix("/"))

    async def restore_ssh(self) -> None:
        """Add again every SSH environment the store remembers (at server start)."""
        if self.store is None:
            return
        rows = await self.store.ssh_environments()
        if not rows:
            return  # no SSH host to restore: asyncssh is not imported (a tenth of a second)
        from actors.server.ssh_hosts import StoredSSHHost

        for name, blob in rows:
            try:
                stored = msgspec.json.decode(blob, type=StoredSSHHost)
                await self.add_ssh(stored.request(), restoring=True)
            except Exception as error:  # one bad row must not keep the server down
                log.error("SSH environment %s not restored: %s", name, error)

    async def remove(self, name: str) -> str:
        ref = self.resolve(name)
        if ref.address == self._local.get(self.default_dir):
            raise EnvironmentRefused("the default environment cannot be removed")
        await self.runtime.stop(ref)
        for name in [k for k, v in self._added.items() if v == ref.address]:
            del self._added[name]
            if self.store is not None:
                self.store.delete_ssh_environment(name)
        self._local = {k: v for k, v in self._local.items() if v != ref.address}
        return ref.address

    def summaries(self) -> list[EnvironmentSummary]:
        found = []
        for address in self.runtime.addresses():
            if not address.startswith("/environments/") or address == SSH_BRIDGE:
                continue
            kind = "ssh" if address.startswith(SSH_BRIDGE + "/") else "local"
            kind = "docker" if address.startswith(DOCKER_PREFIX) else kind
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
