"""The server's execution environments: a default local one, one per working
directory asked for, and SSH hosts added over the wire.

Local environments live at ``/environments/local`` (the server's working
directory) and ``/environments/local-N``; SSH hosts at ``/environments/ssh/<name>``
under one SSH bridge started on first use.
"""

from __future__ import annotations

import os
from pathlib import Path

import trio

from actors.kernel import ActorRef, Rejection, Runtime, UnknownAddressError
from actors.kernel.processes import ProcessLedger
from environments.local import LocalEnvironment
from protocol.environment import AddSSHHost
from protocol.wire import EnvironmentSummary

SSH_BRIDGE = "/environments/ssh"


class EnvironmentNotFound(Rejection):
    code = "not_found"


class EnvironmentRefused(Rejection):
    code = "invalid_request"


class Environments:
    """Finds or starts the environment a session or a request names."""

    def __init__(
        self, runtime: Runtime, default_dir: Path, ledger: ProcessLedger | None = None
    ) -> None:
        self.runtime = runtime
        self.ledger = ledger
        """Where commands' process groups are recorded (ended after a crash)."""
        self.default_dir = Path(os.path.realpath(default_dir))
        self._local: dict[Path, str] = {}
        self._added: dict[str, str] = {}
        """SSH names -> addresses of hosts added over the wire."""

    async def local(self, working_dir: str | os.PathLike[str] | None = None) -> ActorRef:
        """The local environment for ``working_dir`` (the default when None)."""
        path = await trio.Path(working_dir or self.default_dir).resolve()
        path = Path(path)
        if not await trio.Path(path).is_dir():
            raise EnvironmentRefused(f"working directory {path} does not exist")
        address = self._local.get(path)
        if address is not None:
            try:
                return self.runtime.ref(address)
            except UnknownAddressError:
                pass
        name = "local" if path == self.default_dir else f"local-{len(self._local) + 1}"
        ref = await self.runtime.spawn(
            LocalEnvironment(path, ledger=self.ledger), name=f"environments/{name}"
        )
        self._local[path] = ref.address
        return ref

    def resolve(self, name: str) -> ActorRef:
        """An environment by address (``/environments/...``) or by SSH host name."""
        address = name if name.startswith("/") else self._added.get(name, f"/environments/{name}")
        if not address.startswith("/environments/") or address == SSH_BRIDGE:
            raise EnvironmentNotFound(f"{name} is not an environment")
        try:
            return self.runtime.ref(address)
        except UnknownAddressError:
            raise EnvironmentNotFound(f"no environment at {address}") from None

    async def add_ssh(self, request: AddSSHHost) -> ActorRef:
        try:
            bridge = self.runtime.ref(SSH_BRIDGE)
        except UnknownAddressError:
            from environments.ssh.bridge import SSHBridge

            bridge = await self.runtime.spawn(
                SSHBridge(ledger=self.ledger), name="environments/ssh"
            )
        ref: ActorRef = await bridge.ask(request, timeout=60)
        self._added[request.name] = ref.address
        return ref

    async def remove(self, name: str) -> str:
        ref = self.resolve(name)
        if ref.address == self._local.get(self.default_dir):
            raise EnvironmentRefused("the default environment cannot be removed")
        await self.runtime.stop(ref)
        self._added = {k: v for k, v in self._added.items() if v != ref.address}
        self._local = {k: v for k, v in self._local.items() if v != ref.address}
        return ref.address

    def summaries(self) -> list[EnvironmentSummary]:
        found = []
        for address in self.runtime.addresses():
            if not address.startswith("/environments/") or address == SSH_BRIDGE:
                continue
            kind = "ssh" if address.startswith(SSH_BRIDGE + "/") else "local"
            found.append(EnvironmentSummary(address=address, kind=kind))
        return found
