"""The SSHBridge actor: it owns the asyncio loop thread
(:mod:`environments.ssh.asyncio_loop`) that asyncssh runs on, and SSH environments
are its children."""

from __future__ import annotations

from actors.kernel import Actor, ActorRef, AddressInUseError, InvalidAddressError, handler
from actors.kernel.address import validate_name
from actors.kernel.processes import ProcessLedger
from environments.envvars import EnvPolicy
from environments.errors import EnvironmentExists, InvalidRequest
from environments.ssh.asyncio_loop import AsyncioLoop
from environments.ssh.connect import ConnectOptions
from environments.ssh.environment import SSHEnvironment
from environments.ssh.target import parse_target
from protocol.environment import AddSSHHost


class SSHBridge(Actor):
    """Owns the asyncio loop thread; SSH environments are its children.

    Stopping the bridge stops its hosts first (children before parents; each ends
    the process groups it started), then the loop, so no asyncssh work outlives
    it. A bad ``AddSSHHost`` (a name taken or not a valid address segment, a bad
    target or setting) is refused with a typed error; the other hosts are untouched.
    """

    def __init__(
        self, env_policy: EnvPolicy | None = None, ledger: ProcessLedger | None = None
    ) -> None:
        self.loop = AsyncioLoop()
        self.env_policy = env_policy
        self.ledger = ledger

    async def on_start(self) -> None:
        self.loop.start()

    async def on_stop(self) -> None:
        await self.loop.stop()

    @handler
    async def add_host(self, request: AddSSHHost) -> ActorRef:
        """Spawn the host's environment (it connects on first use)."""
        name = _host_name(request.name)
        if name in {ref.address.rsplit("/", 1)[-1] for ref in self.ctx.child_refs}:
            raise EnvironmentExists(f"an SSH environment named {name!r} already exists")
        environment = SSHEnvironment(
            self.loop,
            parse_target(request.target),
            connect_options(request),
            working_dir=request.working_dir,
            env_policy=self.env_policy,
            ledger=self.ledger,
            kill_grace=self.ctx.runtime.kill_grace,
        )
        try:
            return await self.ctx.spawn(environment, name=name)
        except AddressInUseError:
            raise EnvironmentExists(f"an SSH environment named {name!r} already exists") from None


def _host_name(name: str) -> str:
    try:
        validate_name(name)
    except InvalidAddressError:
        valid = False
    else:
        valid = "/" not in name
    if not valid:
        raise InvalidRequest(
            f"invalid SSH environment name {name!r}: use letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def connect_options(request: AddSSHHost) -> ConnectOptions:
    """The pool's settings from the request, refusing values that cannot work."""
    positive = {
        "channels_per_connection": request.channels_per_connection,
        "max_connections": request.max_connections,
        "keepalive_interval": request.keepalive_interval,
        "keepalive_count_max": request.keepalive_count_max,
        "connect_timeout": request.connect_timeout,
    }
    for setting, value in positive.items():
        if not value > 0:
            raise InvalidRequest(f"{setting} must be greater than 0 (got {value})")
    return ConnectOptions(
        known_hosts=request.known_hosts if request.known_hosts is not None else (),
        client_keys=request.client_keys or (),
        config=request.config_files or (),
        passphrase=request.passphrase,
        agent_forwarding=request.agent_forwarding,
        keepalive_interval=request.keepalive_interval,
        keepalive_count_max=request.keepalive_count_max,
        connect_timeout=request.connect_timeout,
        channels_per_connection=request.channels_per_connection,
        max_connections=request.max_connections,
    )
