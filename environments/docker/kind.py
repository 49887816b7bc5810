"""The Docker kind: a container of an image, created on first use and removed
when the environment stops; its containers carry the server's owner label, so a
crashed server's are swept by the next one's first container."""

from __future__ import annotations

from actors.kernel import ActorRef
from environments.kinds import AlreadyExists, Kind, KindContext, SpecRefused
from protocol.environment_specs import DockerSpec


def check(spec: DockerSpec) -> None:
    if not spec.image.strip():
        raise SpecRefused("image cannot be empty")
    if not spec.workspace.startswith("/"):
        raise SpecRefused("workspace must be an absolute path")
    if spec.cpus is not None and not spec.cpus > 0:
        raise SpecRefused("cpus must be more than 0")
    for field in ("memory_bytes", "pids_limit"):
        value = getattr(spec, field)
        if value is not None and value < 1:
            raise SpecRefused(f"{field} must be 1 or more")


async def start(name: str, spec: DockerSpec, ctx: KindContext) -> ActorRef:
    from environments.docker.environment import DockerEnvironment

    workspace = await ctx.real_directory(spec.workspace)
    address = KIND.address(name)
    if address in ctx.runtime.addresses():
        raise AlreadyExists(f"a Docker environment named {name} already exists")
    environment = DockerEnvironment(
        spec.image,
        workspace=workspace,
        copy_workspace=spec.copy_workspace,
        user=spec.user,
        cpus=spec.cpus,
        memory_bytes=spec.memory_bytes,
        pids_limit=spec.pids_limit,
        network=spec.network,
        docker_host=spec.docker_host,
        owner=ctx.owner,
    )
    return await ctx.runtime.spawn(environment, name=address.removeprefix("/"))


KIND = Kind(spec=DockerSpec, start=start, prefixes=("/environments/docker/",), check=check)
