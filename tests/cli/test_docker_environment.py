"""``troupe run --environment docker:IMAGE``: the session's commands run in a
container of the image (the test dockerd's, through ``DOCKER_HOST``) with the working
directory bind-mounted, and the run leaves no container behind."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Home, mock_llm, one_line, shell_then_text
from tests.environments.conftest import DockerForTests, docker  # noqa: F401 - the fixture
from tests.environments.dockerd import IMAGE_USER_UID, labelled_containers


async def test_run_in_a_container(home: Home, docker: DockerForTests) -> None:  # noqa: F811
    # The image's account "troupe" (absent on the host) and a network of loopback only
    # show where the command ran; the file it wrote shows the workspace is shared.
    script = shell_then_text(
        "id -u troupe > seen.txt; ls /sys/class/net >> seen.txt; pwd",
        final="Done in the container.",
    )
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--environment", f"docker:{docker.image}", "go",
            DOCKER_HOST=docker.daemon.host,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"in a container of {docker.image}".encode() in done.stdout
    assert (home.work / "seen.txt").read_text() == f"{IMAGE_USER_UID}\nlo\n"
    assert b"Done in the container." in done.stdout
    assert labelled_containers(docker.daemon, "troupe.managed") == []


async def test_an_unknown_environment_kind_is_one_line(home: Home) -> None:
    done = await home.troupe(
        "run", "--base-url", "http://127.0.0.1:9", "--environment", "podman:x", "go"
    )
    assert done.returncode == 2
    assert "unknown environment 'podman:x'" in one_line(done.stderr)


async def test_the_config_file_chooses_the_container(
    home: Home,
    docker: DockerForTests,  # noqa: F811
) -> None:
    home.config.write_text(f'environment = "docker:{docker.image}"\n')
    script = shell_then_text("id -u troupe > seen.txt", final="Done.")
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "go", DOCKER_HOST=docker.daemon.host
        )
    assert done.returncode == 0, done.stderr
    assert f"in a container of {docker.image}".encode() in done.stdout
    assert (home.work / "seen.txt").read_text() == f"{IMAGE_USER_UID}\n"


async def test_no_daemon_is_one_clear_line(home: Home, tmp_path: Path) -> None:
    """No daemon at ``DOCKER_HOST``: one line that says so and what to do, and an
    exit code; not an actor's start failure with an exception's name in it."""
    socket = tmp_path / "no-docker.sock"
    async with mock_llm(shell_then_text("true", final="never")) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--environment", "docker:debian", "go",
            DOCKER_HOST=f"unix://{socket}",
        )  # fmt: skip
    assert done.returncode != 0
    line = one_line(done.stderr)
    assert f"cannot reach the Docker daemon at unix://{socket}" in line
    assert "is dockerd running" in line
    for noise in ("failed to start", "DockerError", "/sessions/", "Traceback"):
        assert noise not in line
