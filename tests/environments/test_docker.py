"""What only the Docker kind promises: the container's settings (user, limits, no
network, labels), its removal on cleanup and shutdown, the sweep of a killed
process's containers, and a typed error when the daemon cannot be reached."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
import trio

from actors.kernel import Runtime
from environments.docker.api import DockerAPI, DockerError
from environments.docker.environment import DockerEnvironment
from environments.docker.labels import MANAGED, OWNER, PROCESS
from protocol.environment import Cleanup, Describe, ExecCommand, ReadFile, WriteFile
from tests.environments.conftest import DockerForTests
from tests.environments.dockerd import (
    IMAGE_USER_UID,
    alive_in,
    container_exec,
    labelled_containers,
)
from tests.waiting import TEST_KILL_GRACE, workers_per_cpu

HANG_GUARD = 60 * workers_per_cpu()  # stretched where workers share a CPU
ROOT = Path(__file__).resolve().parents[2]


def _written(path: Path) -> bool:
    return path.exists() and path.read_text().endswith("\n")


def _inspect(docker: DockerForTests, container: str) -> dict[str, object]:
    transport = httpx.HTTPTransport(uds=str(docker.daemon.socket))
    with httpx.Client(transport=transport, base_url="http://docker") as client:
        return client.get(f"/containers/{container}/json").json()


def _environment(docker: DockerForTests, workdir: Path, **settings: object) -> DockerEnvironment:
    return DockerEnvironment(
        docker.image,
        workspace=str(workdir),
        docker_host=docker.daemon.host,
        **settings,  # type: ignore[arg-type]
    )


async def test_settings_user_limits_network_and_labels(
    docker: DockerForTests, tmp_path: Path
) -> None:
    os.chmod(tmp_path, 0o777)
    environment = _environment(
        docker,
        tmp_path,
        user="troupe",
        cpus=0.5,
        memory_bytes=256 * 1024 * 1024,
        pids_limit=64,
        owner="settings-test",
    )
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        result = await ref.ask(ExecCommand("id -u; ls /sys/class/net"))
        assert result.stdout.split() == [str(IMAGE_USER_UID), "lo"], "as the user, no network"
        await ref.ask(WriteFile("made.txt", "by the user\n"))
        assert (tmp_path / "made.txt").stat().st_uid == IMAGE_USER_UID
        assert environment.container is not None
        details = _inspect(docker, environment.container)
        host = details["HostConfig"]
        assert isinstance(host, dict)
        assert (host["NanoCpus"], host["Memory"], host["PidsLimit"]) == (
            500_000_000,
            256 * 1024 * 1024,
            64,
        )
        assert host["NetworkMode"] == "none"
        labels = details["Config"]["Labels"]  # type: ignore[index]
        assert labels[MANAGED] == "1"
        assert labels[OWNER] == "settings-test"
        assert labels[PROCESS].split(":")[1] == str(os.getpid())


async def test_cleanup_removes_the_container_and_the_next_call_makes_a_new_one(
    docker: DockerForTests, tmp_path: Path
) -> None:
    environment = _environment(docker, tmp_path, owner="cleanup-test")
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        await ref.ask(ExecCommand("echo one"))
        first = environment.container
        assert first is not None
        await ref.ask(Cleanup())
        assert labelled_containers(docker.daemon, f"{OWNER}=cleanup-test") == []
        await ref.ask(WriteFile("kept.txt", "on the host\n"))
        assert environment.container not in (None, first)
        assert (await ref.ask(ReadFile("kept.txt", line_numbers=False))).text == "on the host"


async def test_shutdown_leaves_no_container_and_no_process(
    docker: DockerForTests, tmp_path: Path
) -> None:
    """A command that traps SIGTERM is running when the runtime shuts down: the
    container and everything in it are gone afterwards."""
    environment = _environment(docker, tmp_path, owner="shutdown-test")
    outcome: list[object] = []
    with trio.fail_after(HANG_GUARD):
        async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
            ref = await runtime.spawn(environment)

            async def stubborn() -> None:
                command = ExecCommand("trap '' TERM; echo $$ > pid; sleep 600", timeout_ms=600_000)
                try:
                    outcome.append(await ref.ask(command, timeout=None))
                except Exception as error:  # the runtime stopped under the call
                    outcome.append(error)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(stubborn)
                while not _written(tmp_path / "pid"):  # noqa: ASYNC110 - written in the container
                    await trio.sleep(0.02)
                container = environment.container
                assert container is not None
                pid = int((tmp_path / "pid").read_text())
                assert alive_in(docker.daemon, container, [pid]) == [pid]
                await runtime.shutdown()
    assert outcome, "the call ended with the runtime"
    assert labelled_containers(docker.daemon, f"{OWNER}=shutdown-test") == []


_CRASHING = textwrap.dedent(
    """
    import sys, trio
    from actors.kernel import Runtime
    from environments.docker.environment import DockerEnvironment
    from protocol.environment import ExecCommand

    async def main():
        async with Runtime() as runtime:
            env = DockerEnvironment(sys.argv[1], workspace=sys.argv[2], docker_host=sys.argv[3],
                                    owner="crash-test")
            ref = await runtime.spawn(env)
            await ref.ask(ExecCommand("echo up"))
            print(env.container, flush=True)
            await trio.sleep_forever()

    trio.run(main)
    """
)


async def test_the_next_start_removes_a_killed_process_containers(
    docker: DockerForTests, tmp_path: Path
) -> None:
    process = subprocess.Popen(  # noqa: ASYNC220 - a child to SIGKILL; read on a thread
        [sys.executable, "-c", _CRASHING, docker.image, str(tmp_path), docker.daemon.host],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        text=True,
    )
    try:
        assert process.stdout is not None
        with trio.fail_after(HANG_GUARD):
            orphan = (await trio.to_thread.run_sync(process.stdout.readline)).strip()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert labelled_containers(docker.daemon, f"{OWNER}=crash-test") == [orphan]
    environment = _environment(docker, tmp_path, owner="crash-test")
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        await ref.ask(ExecCommand("true"))
        assert labelled_containers(docker.daemon, f"{OWNER}=crash-test") == [environment.container]
    assert labelled_containers(docker.daemon, f"{OWNER}=crash-test") == []


async def test_a_live_owner_s_containers_are_left_alone(
    docker: DockerForTests, tmp_path: Path
) -> None:
    """Two environments of one owner in one process: the second's sweep spares the
    first's container (its creator still runs)."""
    first = _environment(docker, tmp_path, owner="shared-owner")
    second = _environment(docker, tmp_path, owner="shared-owner")
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        one = await runtime.spawn(first)
        two = await runtime.spawn(second)
        await one.ask(ExecCommand("true"))
        await two.ask(ExecCommand("true"))
        assert first.container is not None and second.container is not None
        assert container_exec(docker.daemon, first.container, ["echo", "ok"]) == "ok\n"
        assert sorted(labelled_containers(docker.daemon, f"{OWNER}=shared-owner")) == sorted(
            [first.container, second.container]
        )


async def test_an_unreachable_daemon_is_a_typed_error(tmp_path: Path) -> None:
    environment = DockerEnvironment(
        "any:image", workspace=str(tmp_path), docker_host=f"unix://{tmp_path}/no.sock"
    )
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        with pytest.raises(DockerError, match="cannot reach the Docker daemon"):
            await ref.ask(ExecCommand("true"))


async def test_docker_host_is_honoured(
    docker: DockerForTests, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker.daemon.host)
    api = DockerAPI()
    try:
        assert api.host == docker.daemon.host
        assert (await api.call("GET", "/_ping")).text == "OK"
    finally:
        await api.aclose()


async def _remove_from_outside(docker: DockerForTests, container: str | None) -> None:
    assert container is not None
    api = DockerAPI(docker.daemon.host)
    try:
        await api.remove_container(container)
    finally:
        await api.aclose()


async def test_a_container_removed_from_outside_is_made_again(
    docker: DockerForTests, tmp_path: Path
) -> None:
    """A command, or a file call, finds the container gone and makes a fresh one."""
    environment = _environment(docker, tmp_path, owner="vanished-test")
    (tmp_path / "note.txt").write_text("kept\n")
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        await ref.ask(ExecCommand("true"))
        first = environment.container
        await _remove_from_outside(docker, first)
        assert (await ref.ask(ExecCommand("echo again"))).stdout == "again\n"
        second = environment.container
        assert second not in (None, first)
        await _remove_from_outside(docker, second)
        assert (await ref.ask(ReadFile("note.txt", line_numbers=False))).text == "kept"
        assert environment.container not in (None, first, second)


async def test_a_copied_workspace_keeps_the_host_unchanged(
    docker: DockerForTests, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "main.txt").write_text("original\n")
    environment = _environment(docker, workspace, copy_workspace=True, user="troupe")
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        assert (await ref.ask(ReadFile("src/main.txt", line_numbers=False))).text == "original"
        await ref.ask(WriteFile("src/main.txt", "changed in the container\n"))
        result = await ref.ask(ExecCommand("cat src/main.txt; echo new > made.txt; stat -c %u ."))
        assert result.stdout == f"changed in the container\n{IMAGE_USER_UID}\n"
    assert (workspace / "src" / "main.txt").read_text() == "original\n"
    assert not (workspace / "made.txt").exists()


async def test_the_container_is_the_sandbox_only_without_a_network(
    docker: DockerForTests, tmp_path: Path
) -> None:
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        closed = await runtime.spawn(_environment(docker, tmp_path))
        info = await closed.ask(Describe())
        assert info.sandbox is not None and info.sandbox.available
        assert "no network" in info.sandbox.reason
        host = await runtime.spawn(_environment(docker, tmp_path, network="host"))
        info = await host.ask(Describe())
        assert info.sandbox is not None and not info.sandbox.available
        assert (await host.ask(ExecCommand("echo on host network"))).exit_code == 0
