"""The SSH kind: a host reached over SSH, as a child of one shared bridge.

asyncssh is imported only when the first host is started (a server with no SSH
host never loads it)."""

from __future__ import annotations

from actors.kernel import ActorRef, UnknownAddressError
from environments.kinds import AlreadyExists, Kind, KindContext, SpecRefused
from protocol.environment import AddSSHHost
from protocol.environment_specs import SSHSpec

BRIDGE = "/environments/ssh"


def host_request(name: str, spec: SSHSpec) -> AddSSHHost:
    return AddSSHHost(
        target=spec.target,
        name=name,
        working_dir=spec.working_dir,
        known_hosts=spec.known_hosts,
        client_keys=list(spec.client_keys),
        config_files=list(spec.config_files),
        channels_per_connection=spec.channels_per_connection,
    )


def check(spec: SSHSpec) -> None:
    from environments.ssh.target import parse_target

    if not spec.target.strip():
        raise SpecRefused("target cannot be empty")
    try:
        parse_target(spec.target)  # refused here, before it reaches the bridge
    except ValueError as error:
        raise SpecRefused(f"invalid target {spec.target!r}: {error}") from None
    if spec.channels_per_connection < 1:
        raise SpecRefused("channels_per_connection must be 1 or more")


async def start(name: str, spec: SSHSpec, ctx: KindContext) -> ActorRef:
    from environments.ssh.restoring import BRIDGE_RESTARTS, RestoringSSHBridge

    if KIND.address(name) in ctx.runtime.addresses():
        raise AlreadyExists(f"an SSH environment named {name} already exists")
    try:
        bridge = ctx.runtime.ref(BRIDGE)
    except UnknownAddressError:
        bridge = await ctx.runtime.spawn(
            RestoringSSHBridge(ledger=ctx.ledger),
            name=BRIDGE.removeprefix("/"),
            restart=BRIDGE_RESTARTS,
        )
    return await bridge.ask(host_request(name, spec), timeout=60)


async def end_leftovers(ledger, records) -> None:  # type: ignore[no-untyped-def]
    from environments.ssh.leftovers import end_remote_leftovers

    await end_remote_leftovers(ledger, records)


KIND = Kind(
    spec=SSHSpec,
    start=start,
    prefixes=(BRIDGE + "/",),
    check=check,
    internal=(BRIDGE,),
    end_leftovers=end_leftovers,
)
