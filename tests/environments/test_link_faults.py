"""The conformance suite's fault tests, for every kind with a link: the link killed
or hung mid-command fails the call with a typed error, and after the reconnect
nothing of that command runs.

- SSH: the connection's sshd processes SIGKILLed or SIGSTOPped, for root and
  unprivileged logins alike (OpenSSH serves a root login from one process, an
  unprivileged one from a monitor and a child, so the two break differently), with
  and without the host's OS sandbox (whose PID namespace takes the command out of
  the wrapper's view).
- Docker: the daemon itself SIGKILLed (then started again on the same data root)
  or SIGSTOPped, a private dockerd of the test's own.
- This machine has no link to lose.

The command is found on the host by a marker in its command line (a container's
processes are processes of this host too)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pytest
import trio

from actors.kernel import ActorRef, Runtime
from environments.docker.environment import DockerEnvironment
from environments.errors import ConnectionLost
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost, ExecCommand, Sandbox
from tests.environments.conftest import host_request, owned_directory
from tests.environments.dockerd import (
    DockerDaemon,
    DockerUnavailable,
    build_test_image,
    start_dockerd,
    stop_dockerd,
)
from tests.environments.sshd import TEST_USER, SSHServer, connection_tree
from tests.waiting import HANG_GUARD, wait_for_file, wait_until

KINDS = ["local", "ssh-root", "ssh-user", "docker"]


def _command(marker: str) -> str:
    """A leader and a background grandchild, both named by ``marker`` on the host
    (``exec -a`` sets what ps shows), the grandchild deaf to SIGTERM."""
    return (
        f"(trap '' TERM; exec -a {marker}-child sleep 300) & "
        f"echo started > started; exec -a {marker}-leader sleep 300"
    )


def _processes(marker: str) -> list[int]:
    """Host pids of the command's processes still running (zombies aside), found by
    the marker their command line starts with."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argv0.startswith(f"{marker}-".encode()) and state != "Z":
            found.append(int(entry.name))
    return found


@dataclass
class Link:
    """One environment and how to break its link and bring it back."""

    env: ActorRef
    workdir: Path
    break_link: Callable[[str], None]
    """``kill`` or ``hang`` the far side's processes."""
    mend: Callable[[], None]
    """After the failure: let the far side answer again (SIGCONT, or a new daemon)."""
    stopped: list[int] = field(default_factory=list[int])


@dataclass
class PrivateDaemon:
    """A dockerd of one test's own (the session's is shared and must not be killed)."""

    directory: Path
    daemon: DockerDaemon
    image: str


@pytest.fixture
def private_dockerd() -> Iterator[PrivateDaemon]:
    directory = Path(tempfile.mkdtemp(prefix="troupe-dockerd-fault-"))
    try:
        daemon = start_dockerd(directory)
    except DockerUnavailable as reason:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.skip(f"no test dockerd: {reason}")
    holder = PrivateDaemon(directory, daemon, "")
    try:
        holder.image = build_test_image(daemon)
        yield holder
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(holder.daemon.process.pid, signal.SIGCONT)
        stop_dockerd(holder.daemon)


async def _ssh_link(
    user: str, request: pytest.FixtureRequest, runtime: Runtime
) -> AsyncIterator[Link]:
    server: SSHServer = request.getfixturevalue("sshd_with")()
    if user not in server.users:
        pytest.skip(f"no unprivileged login {TEST_USER!r} (creating it needs root)")
    workdir = owned_directory(user)
    bridge = await runtime.spawn(SSHBridge())
    host = msgspec.structs.replace(
        host_request(server, user, f"faults-{user}", workdir),
        keepalive_interval=1.0,
        keepalive_count_max=2,
        connect_timeout=5.0,
    )
    assert isinstance(host, AddSSHHost)
    link = Link(await bridge.ask(host), workdir, lambda fault: None, lambda: None)

    def break_link(fault: str) -> None:
        # Every sshd process serving the link: for root that is one process, for an
        # unprivileged login a monitor and the child that owns the channels.
        serving = connection_tree(server)
        assert serving, "no sshd process serves the connection"
        for pid in serving:
            os.kill(pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        if fault == "hang":
            link.stopped = serving

    def mend() -> None:
        for pid in link.stopped:
            os.kill(pid, signal.SIGCONT)
        link.stopped = []

    link.break_link, link.mend = break_link, mend
    try:
        yield link
    finally:
        mend()
        shutil.rmtree(workdir, ignore_errors=True)


async def _docker_link(
    request: pytest.FixtureRequest, runtime: Runtime, tmp_path: Path
) -> AsyncIterator[Link]:
    private: PrivateDaemon = request.getfixturevalue("private_dockerd")
    workdir = tmp_path / "work"
    workdir.mkdir()
    environment = DockerEnvironment(
        private.image, workspace=str(workdir), docker_host=private.daemon.host, owner="faults"
    )
    environment.keepalive_interval, environment.keepalive_count_max = 1.0, 2
    link = Link(await runtime.spawn(environment), workdir, lambda fault: None, lambda: None)
    killed: list[bool] = []

    def break_link(fault: str) -> None:
        pid = private.daemon.process.pid
        os.kill(pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        if fault == "kill":
            private.daemon.process.wait()
            killed.append(True)
        else:
            link.stopped = [pid]

    def mend() -> None:
        for pid in link.stopped:
            os.kill(pid, signal.SIGCONT)
        link.stopped = []
        if killed:  # a new daemon on the same data root and socket
            killed.clear()
            # containerd died with its dockerd; a new dockerd that finds its pidfile
            # dials the dead one's socket until it gives up, so the file goes first.
            stale = private.directory / "exec" / "containerd" / "containerd.pid"
            stale.unlink(missing_ok=True)
            private.daemon = start_dockerd(private.directory)

    link.break_link, link.mend = break_link, mend
    try:
        yield link
    finally:
        mend()


@pytest.fixture(params=KINDS)
async def link(
    request: pytest.FixtureRequest, runtime: Runtime, tmp_path: Path
) -> AsyncIterator[Link]:
    kind = request.param
    if kind == "local":
        pytest.skip("this machine's environment has no link to lose")
    if kind == "docker" and request.node.callspec.params.get("sandboxed"):
        # Before the private dockerd starts and builds its image (seconds for nothing).
        pytest.skip("the container is the sandbox (no OS sandbox inside it)")
    links = (
        _docker_link(request, runtime, tmp_path)
        if kind == "docker"
        else _ssh_link("root" if kind == "ssh-root" else TEST_USER, request, runtime)
    )
    async for made in links:
        yield made


@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandboxed"])
@pytest.mark.parametrize("fault", ["kill", "hang"])
async def test_a_lost_link_fails_the_call_and_leaves_nothing_of_its_command(
    link: Link, fault: str, sandboxed: bool
) -> None:
    env, workdir = link.env, link.workdir
    assert (await env.ask(ExecCommand("echo warm"))).stdout == "warm\n"
    marker = f"troupe-orphan-{secrets.token_hex(4)}"
    outcome: list[BaseException] = []
    sandbox = Sandbox(writable=(str(workdir),)) if sandboxed else None

    async def long_command() -> None:
        try:
            command = ExecCommand(_command(marker), timeout_ms=600_000, sandbox=sandbox)
            await env.ask(command, timeout=None)
        except ConnectionLost as exc:
            outcome.append(exc)

    try:
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(long_command)
                await wait_for_file(workdir / "started")
                await wait_until(lambda: len(_processes(marker)) == 2, what="both processes")
                link.break_link(fault)
        assert len(outcome) == 1, "the in-flight command fails with ConnectionLost"
        await trio.to_thread.run_sync(link.mend)
        with trio.fail_after(HANG_GUARD):
            assert (await env.ask(ExecCommand("echo back"))).stdout == "back\n"
        await wait_until(
            lambda: not _processes(marker), what=f"the command of the lost link ({marker}) to end"
        )
    finally:
        link.mend()
        for pid in _processes(marker):  # never leave a stray behind, even on failure
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
