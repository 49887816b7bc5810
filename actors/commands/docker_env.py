"""``troupe run --environment docker:IMAGE``: run the session in a container.

The run's working directory is bind-mounted at the same path in a container of
``IMAGE`` (no network); the server adds it as ``/environments/docker/<name>``
unless it has it already, the name made of the image and the directory, so two
runs in one directory on one server share the container.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import cast

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from protocol.client import TroupeClient
from protocol.environment_specs import DockerSpec
from protocol.wire import AddEnvironment, EnvironmentAdded, EnvironmentList, ListEnvironments

DOCKER_PREFIX = "/environments/docker/"
KINDS = "docker:IMAGE"


def docker_image(spec: str) -> str:
    """The image of an ``--environment`` value (``docker:IMAGE``), or a one-line error."""
    kind, _, image = spec.partition(":")
    if kind != "docker" or not image.strip():
        raise CommandError(
            f"unknown environment {spec!r}: give {KINDS} (or --ssh-host for an SSH host)",
            EXIT_BAD_INPUT,
        )
    return image.strip()


def environment_name(image: str, workdir: Path) -> str:
    digest = hashlib.sha256(str(workdir).encode()).hexdigest()[:8]
    short = re.sub(r"[^A-Za-z0-9_.-]+", "-", image).strip("-.")[:40] or "image"
    return f"{short}-{digest}"


async def ensure_docker(client: TroupeClient, image: str, workdir: Path) -> str:
    """The address of the Docker environment for ``image`` and ``workdir``, added if needed."""
    name = environment_name(image, workdir)
    address = DOCKER_PREFIX + name
    listed = cast(EnvironmentList, await client.request(ListEnvironments))
    if any(env.address == address for env in listed.environments):
        return address
    added = cast(
        EnvironmentAdded,
        await client.request(
            AddEnvironment, name=name, spec=DockerSpec(image=image, workspace=str(workdir))
        ),
    )
    return added.environment.address
