"""Docker environments over the wire: the server adds one (``add_docker_environment``),
lists it as ``docker``, runs a session's shell calls and direct execs in the
container, refuses a duplicate or invalid request with a typed error, and removing
it (or stopping the server) removes its container. Against the test dockerd."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from protocol.environment_specs import DockerSpec
from protocol.wire import (
    AddDockerEnvironment,
    AddEnvironment,
    CreateSession,
    ExecInEnvironment,
    ListEnvironments,
    RemoveEnvironment,
    SubmitInput,
)
from tests.environments import conftest as environment_fixtures
from tests.environments.conftest import DockerForTests
from tests.environments.dockerd import IMAGE_USER_UID, labelled_containers
from tests.wire.conftest import HANG_GUARD, StartStack, events_until, shell_turns, subscribe
from tests.wire.test_requests import expect_error

BOX = "/environments/docker/box"
docker = environment_fixtures.docker
"""The session-wide test dockerd of the environment tests, with its image."""


def docker_fields(docker: DockerForTests, name: str, workspace: Path, **extra: object) -> dict:
    return {
        "name": name,
        "image": docker.image,
        "workspace": str(workspace),
        "docker_host": docker.daemon.host,
        **extra,
    }


async def test_add_use_list_and_remove(
    start_stack: StartStack,
    docker: DockerForTests,
    tmp_path: Path,
) -> None:
    with trio.fail_after(HANG_GUARD * 2):
        stack_of = start_stack(shell_turns("id -u troupe; pwd"))
        async with stack_of as stack, stack.client() as client:
            added = await client.request(
                AddDockerEnvironment, **docker_fields(docker, "box", tmp_path)
            )
            assert (added.environment.address, added.environment.kind) == (
                BOX,
                "docker",
            )
            await expect_error("already_exists", client, AddDockerEnvironment,
                               **docker_fields(docker, "box", tmp_path))  # fmt: skip
            listed = await client.request(ListEnvironments)
            kinds = {e.address: e.kind for e in listed.environments}
            assert kinds[BOX] == "docker"
            done = await client.request(
                ExecInEnvironment,
                environment=BOX,
                command="id -u troupe",
            )
            assert done.result.stdout == f"{IMAGE_USER_UID}\n"

            created = await client.request(CreateSession, environment=BOX)
            session = created.session.session_id
            await subscribe(client, session, after_seq=created.session.last_seq)
            await client.request(SubmitInput, session=session, text="where are you")
            events = await events_until(client, "processing_end")
            ends = [e for e in events if e.kind == "tool_call_end"]
            assert ends and not ends[0].data["is_error"]
            assert f"{IMAGE_USER_UID}\n{tmp_path}" in ends[0].data["output"]
            assert len(labelled_containers(docker.daemon, "troupe.managed")) == 1

            await client.request(RemoveEnvironment, environment=BOX)
            assert labelled_containers(docker.daemon, "troupe.managed") == []
            await client.request(ExecInEnvironment, environment="local", command="true")
            await client.request(AddDockerEnvironment, **docker_fields(docker, "again", tmp_path))
            await client.request(ExecInEnvironment, environment="docker/again", command="true")
            assert len(labelled_containers(docker.daemon, "troupe.managed")) == 1
        assert labelled_containers(docker.daemon, "troupe.managed") == [], "server stop removes it"


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "bad name"},
        {"image": ""},
        {"workspace": "relative/dir"},
        {"workspace": "/no/such/directory"},
        {"cpus": 0.0},
        {"memory_bytes": 0},
    ],
)
async def test_an_invalid_request_is_refused(
    start_stack: StartStack, docker: DockerForTests, tmp_path: Path, bad: dict
) -> None:
    with trio.fail_after(HANG_GUARD):
        async with start_stack() as stack, stack.client() as client:
            fields = {**docker_fields(docker, "box", tmp_path), **bad}
            await expect_error("invalid_request", client, AddDockerEnvironment, **fields)
            listed = await client.request(ListEnvironments)
            assert [e for e in listed.environments if e.kind == "docker"] == []


async def test_add_environment_with_a_docker_spec_survives_a_restart(
    start_stack: StartStack, docker: DockerForTests, tmp_path: Path
) -> None:
    """The one ``add_environment`` frame with a tagged spec; the environment is
    stored and added again (with a fresh container) when the server starts again,
    until ``remove_environment``."""
    spec = DockerSpec(image=docker.image, workspace=str(tmp_path), docker_host=docker.daemon.host)
    with trio.fail_after(HANG_GUARD * 2):
        async with start_stack() as stack, stack.client() as client:
            added = await client.request(AddEnvironment, name="kept", spec=spec)
            assert (added.environment.address, added.environment.kind) == (
                "/environments/docker/kept",
                "docker",
            )
            await expect_error("already_exists", client, AddEnvironment, name="kept", spec=spec)
            done = await client.request(ExecInEnvironment, environment="kept", command="echo in")
            assert done.result.stdout == "in\n"
        assert labelled_containers(docker.daemon, "troupe.managed") == []
        async with start_stack() as stack, stack.client() as client:
            listed = await client.request(ListEnvironments)
            assert {e.address: e.kind for e in listed.environments}.get(
                "/environments/docker/kept"
            ) == "docker"
            done = await client.request(ExecInEnvironment, environment="kept", command="echo again")
            assert done.result.stdout == "again\n"
            await client.request(RemoveEnvironment, environment="kept")
        async with start_stack() as stack, stack.client() as client:
            listed = await client.request(ListEnvironments)
            assert [e for e in listed.environments if e.kind == "docker"] == []
