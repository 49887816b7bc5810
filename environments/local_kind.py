"""The local kind: a directory of this machine. The server's own environments
(``/environments/local`` for its directory, ``/environments/local-N`` for others a
session asks for) are of this kind too; one added by name lives at
``/environments/dir/<name>``."""

from __future__ import annotations

from pathlib import Path

from actors.kernel import ActorRef
from environments.kinds import AlreadyExists, Kind, KindContext, MachineEntry, SpecRefused
from protocol.environment_specs import LocalSpec

MACHINE = "/environments/local"
"""The server's own directory's environment; others it starts are ``local-N``."""


def for_directory(directory: str) -> LocalSpec:
    return LocalSpec(working_dir=directory)


async def start_at(address: str, spec: LocalSpec, ctx: KindContext) -> ActorRef:
    """Start the environment of ``spec`` at ``address`` (the caller checked that the
    directory exists: ``spec.working_dir`` is its real path)."""
    from environments.local import LocalEnvironment

    environment = LocalEnvironment(Path(spec.working_dir), ledger=ctx.ledger)
    ref = await ctx.runtime.spawn(environment, name=address.removeprefix("/"))
    ctx.started(ref.address, environment)
    return ref


def check(spec: LocalSpec) -> None:
    if not spec.working_dir.startswith("/"):
        raise SpecRefused("working_dir must be an absolute path")


async def start(name: str, spec: LocalSpec, ctx: KindContext) -> ActorRef:
    directory = await ctx.real_directory(spec.working_dir)
    address = KIND.address(name)
    if address in ctx.runtime.addresses():
        raise AlreadyExists(f"an environment named {name} already exists")
    return await start_at(address, LocalSpec(directory), ctx)


KIND = Kind(
    spec=LocalSpec,
    start=start,
    prefixes=("/environments/dir/", MACHINE),
    check=check,
    machine=MachineEntry(MACHINE, for_directory, start_at),
)
