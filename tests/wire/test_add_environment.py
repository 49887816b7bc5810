"""``add_environment`` with a spec of each kind the server can start without a
network: a named directory of the server's machine (``local``) is added, used,
listed under its kind, stored and back after a restart, and removed; names are one
namespace across kinds; a spec that cannot work is ``invalid_request`` naming the
field, and the server's own environments are untouched. (SSH and Docker specs:
tests/wire/test_ssh_environments.py and test_docker_environments.py.)"""

from __future__ import annotations

from pathlib import Path

import trio

from protocol.environment_specs import DockerSpec, LocalSpec, SSHSpec
from protocol.wire import (
    AddEnvironment,
    ExecInEnvironment,
    ListEnvironments,
    RemoveEnvironment,
)
from tests.wire.conftest import BOTH_STORES, HANG_GUARD, StartStack
from tests.wire.test_requests import expect_error

HERE = "/environments/dir/here"


async def _kinds(client) -> dict[str, str]:
    listed = await client.request(ListEnvironments)
    return {e.address: e.kind for e in listed.environments}


@BOTH_STORES
async def test_a_named_directory_is_added_used_stored_and_removed(
    start_stack: StartStack, tmp_path: Path
) -> None:
    directory = tmp_path / "named"
    directory.mkdir()
    with trio.fail_after(HANG_GUARD * 2):
        async with start_stack() as stack, stack.client() as client:
            added = await client.request(
                AddEnvironment, name="here", spec=LocalSpec(str(directory))
            )
            assert (added.environment.address, added.environment.kind) == (HERE, "local")
            done = await client.request(ExecInEnvironment, environment="here", command="pwd")
            assert done.result.stdout == f"{directory}\n"
            # One namespace: the name is taken whatever the kind asked for.
            taken = SSHSpec("ssh://nobody@127.0.0.1:9")
            await expect_error("already_exists", client, AddEnvironment, name="here", spec=taken)
            kinds = await _kinds(client)
            assert kinds[HERE] == "local" and kinds["/environments/local"] == "local"
        async with start_stack() as stack, stack.client() as client:
            assert (await _kinds(client)).get(HERE) == "local"
            done = await client.request(ExecInEnvironment, environment=HERE, command="pwd")
            assert done.result.stdout == f"{directory}\n"
            await client.request(RemoveEnvironment, environment="here")
            assert HERE not in await _kinds(client)
        async with start_stack() as stack, stack.client() as client:
            assert HERE not in await _kinds(client)


async def test_specs_that_cannot_work_are_refused_by_field(
    start_stack: StartStack, tmp_path: Path
) -> None:
    bad = [
        ("ok-name", LocalSpec("relative/dir"), "working_dir"),
        ("ok-name", LocalSpec(str(tmp_path / "missing")), "does not exist"),
        ("ok-name", DockerSpec(image="", workspace=str(tmp_path)), "image"),
        ("ok-name", DockerSpec(image="debian", workspace="relative"), "workspace"),
        ("ok-name", SSHSpec(""), "target"),
        ("bad name", LocalSpec(str(tmp_path)), "name"),
        ("ok-name", LocalSpec(f"{tmp_path}\x00x"), "NUL"),
    ]
    with trio.fail_after(HANG_GUARD):
        async with start_stack() as stack, stack.client() as client:
            before = await _kinds(client)
            for name, spec, field in bad:
                try:
                    await client.request(AddEnvironment, name=name, spec=spec)
                except Exception as error:
                    assert getattr(error, "code", None) == "invalid_request", error
                    assert field in str(error), (field, error)
                else:
                    raise AssertionError(f"{spec} was added")
            assert await _kinds(client) == before
