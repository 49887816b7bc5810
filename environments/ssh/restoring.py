"""The SSH kind's supervised bridge: one bridge, shared by every SSH host a server
adds, that keeps its hosts across its own restarts.

The bridge is shared by every client and session that uses an SSH host, so it runs
with a restart policy: if it fails, the kernel starts the same bridge again in
place, and this subclass re-adds every host it had (their environments are its
children, so they went down with it). What the store keeps is the host's
:class:`~protocol.environment_specs.SSHSpec` (paths and names, never a secret).
"""

from __future__ import annotations

import logging

from actors.kernel import ActorRef, RestartPolicy, handler
from actors.kernel.processes import ProcessLedger
from environments.kinds import AlreadyExists
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost
from protocol.supervision import ChildFailed, ChildStopped

log = logging.getLogger("troupe.server")

BRIDGE_RESTARTS = RestartPolicy(max_restarts=5, within=60.0)


class RestoringSSHBridge(SSHBridge):
    """An SSHBridge that re-adds its hosts when it is restarted after a failure."""

    def __init__(self, ledger: ProcessLedger | None = None) -> None:
        super().__init__(ledger=ledger)
        self.hosts: dict[str, AddSSHHost] = {}
        self._started = False

    async def on_start(self) -> None:
        if self.loop.running:  # a restart: the failed incarnation's loop is still up
            await self.loop.stop()
        await super().on_start()
        if self._started:
            for name, request in list(self.hosts.items()):
                try:
                    await super().add_host(request)
                except Exception as error:  # a host that cannot come back stays out
                    log.error("SSH environment %s not restored: %s", name, error)
                    del self.hosts[name]
        self._started = True

    async def add_host(self, request: AddSSHHost) -> ActorRef:
        if request.name in self.hosts:
            raise AlreadyExists(f"an SSH environment named {request.name} already exists")
        ref = await super().add_host(request)
        self.hosts[request.name] = request
        return ref

    @handler
    async def on_child_stopped(self, message: ChildStopped) -> None:
        """A host was removed: forget it, unless a restart already brought it back."""
        if all(ref.address != message.address for ref in self.ctx.child_refs):
            self.hosts.pop(message.address.rsplit("/", 1)[-1], None)

    @handler
    async def on_child_failed(self, message: ChildFailed) -> None:
        """A host that failed past its own restarts is gone: forget it."""
        log.error("SSH environment %s failed: %s", message.address, message.message)
        await self.on_child_stopped(ChildStopped(message.address))
