"""The link dies between the fork and the group report reaching the client.

The client learns a command's process group only from the wrapper's report on
stderr. Here the wrapper stops itself right after the fork (one line added to the
real wrapper), so the report can never arrive before the link is cut: the group
is unknown to the client, deterministically. Then:

- the call fails with ConnectionLost, and the reconnect ends the command anyway:
  the client remembered the call's nonce, and the kill path finds the wrapper by it
  in /proc, whether the wrapper came as the command itself or fed to ``bash -s``;
- when the connection's sshd is dead and the wrapper goes on, its report cannot be
  written: the wrapper ends the group itself at once (it no longer dies of SIGPIPE),
  with no further call.

For root and unprivileged logins; the command is found on the host by a marker in
its command line.
"""

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
from environments.ssh import remote_exec
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost, ExecCommand
from tests.environments.conftest import host_request, owned_directory
from tests.environments.helpers import alive
from tests.environments.sshd import TEST_USER, SSHServer, connection_tree
from tests.environments.test_link_faults import _processes
from tests.waiting import HANG_GUARD, wait_for_file, wait_until

_FORK = "\n__pid=$!\n"
_LONG = 70_000
"""Characters of padding that make the wrapper too long to be sent as the command
itself: it is fed to ``bash -s`` instead."""


def _command(marker: str, via_stdin: bool) -> str:
    """Writes the wrapper's pid (``$$`` in the subshell), then a leader and a
    grandchild deaf to SIGTERM, both named by ``marker``."""
    padding = f": {'x' * _LONG}\n" if via_stdin else ""
    return (
        f"{padding}echo $$ > wrapper.pid; "
        f"(trap '' TERM; exec -a {marker}-child sleep 300) & "
        f"echo started > started; exec -a {marker}-leader sleep 300"
    )


def _stop_wrapper_after_fork(monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    """The real wrapper of the marked command, with the wrapper stopping itself
    between the fork and its group report."""
    real = remote_exec.command_script

    def stopping(command: str, *args: object, **kwargs: object) -> str:
        script = real(command, *args, **kwargs)  # type: ignore[arg-type]
        if marker not in command:
            return script
        assert _FORK in script, "the wrapper no longer forks where this test expects"
        return script.replace(_FORK, f"{_FORK}kill -STOP $$\n", 1)

    monkeypatch.setattr(remote_exec, "command_script", stopping)


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


@pytest.mark.parametrize("fault", ["kill", "hang"])
@pytest.mark.parametrize("via_stdin", [False, True], ids=["direct", "stdin"])
@pytest.mark.parametrize("user", ["root", TEST_USER])
async def test_a_command_whose_group_never_reached_the_client_is_ended_on_reconnect(
    user: str,
    via_stdin: bool,
    fault: str,
    sshd_with: Callable[..., SSHServer],
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = sshd_with()
    if user not in server.users:
        pytest.skip(f"no unprivileged login {TEST_USER!r} (creating it needs root)")
    workdir = owned_directory(user)
    marker = f"troupe-unreported-{secrets.token_hex(4)}"
    _stop_wrapper_after_fork(monkeypatch, marker)
    bridge = await runtime.spawn(SSHBridge())
    request = msgspec.structs.replace(
        host_request(server, user, f"unreported-{user}", workdir),
        keepalive_interval=1.0,
        keepalive_count_max=2,
        connect_timeout=5.0,
    )
    assert isinstance(request, AddSSHHost)
    env = await bridge.ask(request)
    assert (await env.ask(ExecCommand("echo warm"))).stdout == "warm\n"
    outcome: list[BaseException] = []
    stopped: list[int] = []
    wrapper = 0

    async def long_command() -> None:
        try:
            command = ExecCommand(_command(marker, via_stdin), timeout_ms=600_000)
            await env.ask(command, timeout=None)
        except ConnectionLost as exc:
            outcome.append(exc)

    try:
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(long_command)
                await wait_for_file(workdir / "started")
                await wait_for_file(workdir / "wrapper.pid")
                await wait_until(lambda: (workdir / "wrapper.pid").read_text().endswith("\n"))
                wrapper = int((workdir / "wrapper.pid").read_text())
                await wait_until(lambda: _state(wrapper) == "T", what="the wrapper to stop")
                await wait_until(lambda: len(_processes(marker)) == 2, what="both processes")
                serving = connection_tree(server)
                assert serving, "no sshd process serves the connection"
                for pid in serving:
                    os.kill(pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
                if fault == "hang":
                    stopped = serving
        assert len(outcome) == 1, "the in-flight command fails with ConnectionLost"
        assert _processes(marker), "nothing ended the command before the reconnect"
        with trio.fail_after(HANG_GUARD):
            assert (await env.ask(ExecCommand("echo back"))).stdout == "back\n"
        await wait_until(
            lambda: not _processes(marker) and not alive([wrapper]),
            what=f"the command of the lost link ({marker}) and its wrapper to end",
        )
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        for pid in [*_processes(marker), *([wrapper] if wrapper else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.parametrize("user", ["root", TEST_USER])
async def test_a_wrapper_that_cannot_report_its_group_ends_it_at_once(
    user: str,
    sshd_with: Callable[..., SSHServer],
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = sshd_with()
    if user not in server.users:
        pytest.skip(f"no unprivileged login {TEST_USER!r} (creating it needs root)")
    workdir = owned_directory(user)
    marker = f"troupe-unreported-{secrets.token_hex(4)}"
    _stop_wrapper_after_fork(monkeypatch, marker)
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(server, user, f"unwritable-{user}", workdir))
    assert (await env.ask(ExecCommand("echo warm"))).stdout == "warm\n"
    outcome: list[BaseException] = []
    wrapper = 0

    async def long_command() -> None:
        try:
            command = ExecCommand(_command(marker, False), timeout_ms=600_000)
            await env.ask(command, timeout=None)
        except ConnectionLost as exc:
            outcome.append(exc)

    try:
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(long_command)
                await wait_for_file(workdir / "started")
                await wait_for_file(workdir / "wrapper.pid")
                await wait_until(lambda: (workdir / "wrapper.pid").read_text().endswith("\n"))
                wrapper = int((workdir / "wrapper.pid").read_text())
                await wait_until(lambda: _state(wrapper) == "T", what="the wrapper to stop")
                await wait_until(lambda: len(_processes(marker)) == 2, what="both processes")
                for pid in connection_tree(server):
                    os.kill(pid, signal.SIGKILL)
        assert len(outcome) == 1, "the in-flight command fails with ConnectionLost"
        # No call follows, so no reconnect: only the wrapper can end the command now.
        os.kill(wrapper, signal.SIGCONT)
        await wait_until(
            lambda: not _processes(marker) and not alive([wrapper]),
            what=f"the wrapper to end its unreported group ({marker}) and itself",
        )
    finally:
        for pid in [*_processes(marker), *([wrapper] if wrapper else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)
