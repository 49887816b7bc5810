"""A connection's sshd killed or hung mid-command: the call fails typed, and after
the reconnect nothing of that command runs on the host, for root and unprivileged
logins alike (OpenSSH serves a root login from one process, an unprivileged one
from a monitor and a child, so the two break differently), with and without the
host's OS sandbox (whose PID namespace takes the command out of the wrapper's
view). The command is found on the host by a marker in its command line."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
import trio

from actors.kernel import Runtime
from environments.errors import ConnectionLost
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost, ExecCommand, Sandbox
from tests.environments.conftest import host_request, owned_directory
from tests.environments.sshd import TEST_USER, SSHServer, connection_tree
from tests.waiting import HANG_GUARD, wait_for_file, wait_until


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


@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandboxed"])
@pytest.mark.parametrize("fault", ["kill", "hang"])
@pytest.mark.parametrize("user", ["root", TEST_USER])
async def test_a_lost_link_fails_the_call_and_leaves_nothing_of_its_command(
    user: str, fault: str, sandboxed: bool, sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with()
    if user not in server.users:
        pytest.skip(f"no unprivileged login {TEST_USER!r} (creating it needs root)")
    workdir = owned_directory(user)
    bridge = await runtime.spawn(SSHBridge())
    request = msgspec.structs.replace(
        host_request(server, user, f"{fault}-{user}", workdir),
        keepalive_interval=1.0,
        keepalive_count_max=2,
        connect_timeout=5.0,
    )
    assert isinstance(request, AddSSHHost)
    env = await bridge.ask(request)
    assert (await env.ask(ExecCommand("echo warm"))).stdout == "warm\n"
    marker = f"troupe-orphan-{secrets.token_hex(4)}"
    outcome: list[BaseException] = []
    sandbox = Sandbox(writable=(str(workdir),)) if sandboxed else None
    stopped: list[int] = []

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
                # Every sshd process serving the link: for root that is one process, for
                # an unprivileged login a monitor and the child that owns the channels.
                serving = connection_tree(server)
                assert serving, "no sshd process serves the connection"
                for pid in serving:
                    os.kill(pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
                if fault == "hang":
                    stopped = serving
        assert len(outcome) == 1, "the in-flight command fails with ConnectionLost"
        with trio.fail_after(HANG_GUARD):
            assert (await env.ask(ExecCommand("echo back"))).stdout == "back\n"
        await wait_until(
            lambda: not _processes(marker), what=f"the command of the lost link ({marker}) to end"
        )
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        for pid in _processes(marker):  # never leave a stray behind, even on failure
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)
