"""One environment fixture, parametrized over every kind the behaviour suite covers:
this machine, a real OpenSSH sshd on loopback logged into as root and as an
unprivileged user, and a container of a private real dockerd."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from actors.kernel import ActorRef, Runtime
from environments.docker.environment import DockerEnvironment
from environments.local import LocalEnvironment
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost
from tests.environments.dockerd import (
    DockerDaemon,
    DockerUnavailable,
    alive_in,
    build_test_image,
    start_dockerd,
    stop_dockerd,
)
from tests.environments.helpers import alive
from tests.environments.sshd import TEST_USER, SSHDUnavailable, SSHServer, start_sshd
from tests.waiting import TEST_KILL_GRACE

ENVIRONMENT_KINDS = ["local", "ssh-root", "ssh-user", "docker"]


@dataclass(frozen=True)
class EnvUnderTest:
    """An environment actor plus where its working directory is on this host."""

    kind: str
    ref: ActorRef
    workdir: Path
    alive: Callable[[list[int]], list[int]] = alive
    """Those of the pids a command wrote (in its own pid namespace) still running."""


@dataclass(frozen=True)
class DockerForTests:
    """The session's private dockerd and the image built for the tests."""

    daemon: DockerDaemon
    image: str


@pytest.fixture(scope="session")
def docker() -> Iterator[DockerForTests]:
    """A dockerd of the test session's own (data root, socket, process), with the
    test image imported; every container removed and the daemon stopped at the end."""
    directory = Path(tempfile.mkdtemp(prefix="troupe-dockerd-"))
    try:
        daemon = start_dockerd(directory)
    except DockerUnavailable as reason:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.skip(f"no test dockerd: {reason}")
    try:
        try:
            image = build_test_image(daemon)
        except DockerUnavailable as reason:
            pytest.skip(f"no test image: {reason}")
        yield DockerForTests(daemon, image)
    finally:
        stop_dockerd(daemon)


@pytest.fixture(scope="session")
def sshd() -> Iterator[SSHServer]:
    directory = Path(tempfile.mkdtemp(prefix="troupe-sshd-"))
    try:
        process, server = start_sshd(directory)
    except SSHDUnavailable as reason:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.skip(f"no test sshd: {reason}")
    try:
        yield server
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def sshd_with() -> Iterator[Callable[..., SSHServer]]:
    """Start a private sshd configured for one test (``max_sessions=2``, stock
    ``max_startups``...); stopped, even if a test left it SIGSTOPped, at the end."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(**settings: object) -> SSHServer:
        directory = Path(tempfile.mkdtemp(prefix="troupe-sshd-"))
        try:
            process, server = start_sshd(directory, **settings)  # type: ignore[arg-type]
        except SSHDUnavailable as reason:
            shutil.rmtree(directory, ignore_errors=True)
            pytest.skip(f"no test sshd: {reason}")
        started.append((process, directory))
        return server

    yield start
    for process, directory in started:
        os.kill(process.pid, signal.SIGCONT)
        process.kill()
        process.wait()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as rt:
        yield rt


@pytest.fixture
async def ssh_bridge(runtime: Runtime) -> ActorRef:
    return await runtime.spawn(SSHBridge(), name="environments/ssh")


def host_request(
    server: SSHServer, user: str, name: str, workdir: Path, **extra: object
) -> AddSSHHost:
    return AddSSHHost(
        target=f"ssh://{user}@127.0.0.1:{server.port}",
        name=name,
        working_dir=str(workdir),
        known_hosts=str(server.known_hosts),
        client_keys=[str(server.client_key)],
        **extra,  # type: ignore[arg-type]
    )


def owned_directory(user: str) -> Path:
    """A fresh directory the login can write (pytest's tmp_path is root-only)."""
    directory = Path(tempfile.mkdtemp(prefix=f"troupe-{user}-"))
    account = pwd.getpwnam(user)
    shutil.chown(directory, account.pw_uid, account.pw_gid)
    return directory


def skip_before_setup(request: pytest.FixtureRequest, kind: str) -> None:
    """A test's ``@pytest.mark.env_skip.with_args(why)`` mark: ``why(kind, params)`` (the test's
    parameters) gives the reason it skips for this kind, or None. Decided before the
    environment is built, which for a container or an SSH login takes seconds."""
    params = request.node.callspec.params
    for mark in request.node.iter_markers("env_skip"):
        reason = mark.args[0](kind, params)
        if reason is not None:
            pytest.skip(reason)


@pytest.fixture(params=ENVIRONMENT_KINDS)
async def env(
    request: pytest.FixtureRequest, runtime: Runtime, tmp_path: Path
) -> AsyncIterator[EnvUnderTest]:
    kind = request.param
    skip_before_setup(request, kind)
    if kind == "local":
        workdir = tmp_path / "work"
        workdir.mkdir()
        ref = await runtime.spawn(LocalEnvironment(workdir), name="environments/local")
        yield EnvUnderTest(kind, ref, workdir)
        return
    if kind == "docker":
        docker: DockerForTests = request.getfixturevalue("docker")
        workdir = tmp_path / "work"
        workdir.mkdir()
        environment = DockerEnvironment(
            docker.image, workspace=str(workdir), docker_host=docker.daemon.host, owner="tests"
        )
        ref = await runtime.spawn(environment, name="environments/docker")
        yield EnvUnderTest(
            kind, ref, workdir, lambda pids: alive_in(docker.daemon, environment.container, pids)
        )
        return
    server: SSHServer = request.getfixturevalue("sshd")
    user = "root" if kind == "ssh-root" else TEST_USER
    if user not in server.users:
        pytest.skip(f"no unprivileged login {TEST_USER!r} (creating it needs root)")
    bridge = await runtime.spawn(SSHBridge(), name="environments/ssh")
    workdir = owned_directory(user)
    try:
        ref = await bridge.ask(host_request(server, user, kind, workdir))
        yield EnvUnderTest(kind, ref, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
