"""SSH environments under real conditions: stock sshd limits, shutdown, busy channels,
stopped listeners. Every test starts its own sshd, configured the way it needs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from actors.kernel import ActorRef, Runtime
from environments.errors import HostUnreachable
from environments.ssh.bridge import SSHBridge
from protocol.environment import ExecCommand, FileExists
from tests.environments.conftest import host_request, owned_directory
from tests.environments.helpers import alive
from tests.environments.sshd import TEST_USER, SSHServer, connection_tree
from tests.waiting import workers_per_cpu

HANG_GUARD = 60 * workers_per_cpu()  # stretched where workers share a CPU
STOCK_STARTUPS = "10:30:100"
"""OpenSSH's default MaxStartups: more unauthenticated connections get dropped."""

# Ignores SIGTERM (only SIGKILL ends it). Each records its own pid and the shell
# that runs it ($$: the remote wrapper), so the host can be asked about both.
TERM_IGNORING = "trap '' TERM; echo $BASHPID $$ > {name}.pid; while true; do sleep 0.05; done"
TERM_OBEYING = "echo $BASHPID $$ > {name}.pid; exec sleep 600"


def _user(server: SSHServer, user: str) -> str:
    if user not in server.users:
        pytest.skip(f"no unprivileged login {TEST_USER!r} (creating it needs root)")
    return user


def _pids(directory: Path, names: list[str]) -> list[int]:
    return [int(pid) for name in names for pid in (directory / f"{name}.pid").read_text().split()]


async def _wait_for_files(directory: Path, names: list[str]) -> None:
    while not all((directory / f"{name}.pid").exists() for name in names):  # noqa: ASYNC110
        await trio.sleep(0.05)


@pytest.mark.parametrize("max_sessions", [10, 2])
@pytest.mark.parametrize("with_working_dir", [True, False])
async def test_twenty_at_once_against_stock_session_limits(
    sshd_with: Callable[..., SSHServer],
    runtime: Runtime,
    max_sessions: int,
    with_working_dir: bool,
) -> None:
    server = sshd_with(max_sessions=max_sessions, max_startups=STOCK_STARTUPS)
    workdir = owned_directory("root")
    request = host_request(server, "root", "stock", workdir)
    if not with_working_dir:
        request = _replace(request, working_dir=None)
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(request)
    results: dict[int, str] = {}

    async def run(n: int) -> None:
        command = ExecCommand(f"sleep 1; echo {n}", timeout_ms=120_000)
        results[n] = (await env.ask(command, timeout=None)).stdout

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(run, n)
    assert results == {n: f"{n}\n" for n in range(20)}
    accepted = server.log_lines("Accepted publickey")
    # The default max_connections (4), plus at most one for the kill path.
    assert 1 <= len(accepted) <= 5, accepted


def _replace(request: object, **changes: object) -> object:
    fields = {f: getattr(request, f) for f in request.__struct_fields__}  # type: ignore[attr-defined]
    return type(request)(**{**fields, **changes})


@pytest.mark.parametrize("user", ["root", TEST_USER])
async def test_shutdown_ends_every_remote_group(
    sshd_with: Callable[..., SSHServer], user: str
) -> None:
    server = sshd_with()
    login = _user(server, user)
    workdir = owned_directory(login)
    names = [f"stubborn{n}" for n in range(3)] + [f"plain{n}" for n in range(2)]
    async with Runtime(grace=2.0) as runtime:
        bridge = await runtime.spawn(SSHBridge())
        env = await bridge.ask(host_request(server, login, "box", workdir))
        async with trio.open_nursery() as nursery:
            for name in names:
                template = TERM_IGNORING if name.startswith("stubborn") else TERM_OBEYING
                command = ExecCommand(template.format(name=name), timeout_ms=600_000)
                nursery.start_soon(_ignore_errors, env.ask, command)
            with trio.fail_after(HANG_GUARD):
                await _wait_for_files(workdir, names)
            pids = _pids(workdir, names)
            assert sorted(alive(pids)) == sorted(set(pids))
            with trio.fail_after(HANG_GUARD):
                await runtime.shutdown()
            nursery.cancel_scope.cancel()
    assert alive(pids) == [], "shutdown left remote commands running"


async def _ignore_errors(ask: Callable[..., object], message: object) -> None:
    with contextlib.suppress(Exception):  # the runtime is going away under it
        await ask(message, timeout=None)  # type: ignore[misc]


async def test_cleanup_ends_every_remote_group(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    from protocol.environment import Cleanup

    server = sshd_with()
    workdir = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(server, "root", "box", workdir))
    names = ["stubborn0", "plain0"]
    async with trio.open_nursery() as nursery:
        for name in names:
            template = TERM_IGNORING if name.startswith("stubborn") else TERM_OBEYING
            nursery.start_soon(
                _ignore_errors, env.ask, ExecCommand(template.format(name=name), timeout_ms=600_000)
            )
        with trio.fail_after(HANG_GUARD):
            await _wait_for_files(workdir, names)
            await env.ask(Cleanup(), timeout=None)
    assert alive(_pids(workdir, names)) == []
    assert (await env.ask(ExecCommand("echo again"))).stdout == "again\n"


async def test_commands_that_time_out_on_every_busy_channel_are_all_killed(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with(max_sessions=10)
    workdir = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(
        _replace(host_request(server, "root", "busy", workdir), max_connections=2)
    )
    names = [f"busy{n}" for n in range(16)]  # 8 command channels on each of 2 connections
    results = []

    async def run(name: str) -> None:
        command = ExecCommand(TERM_IGNORING.format(name=name), timeout_ms=3_000)
        results.append(await env.ask(command, timeout=None))

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            for name in names:
                nursery.start_soon(run, name)
    assert len(results) == 16 and all(result.timed_out for result in results)
    assert alive(_pids(workdir, names)) == [], "a timed-out command kept running"


async def test_stopped_listener_fails_calls_in_parallel_and_recovers(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with()
    workdir = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    connect_timeout = 3.0
    env = await bridge.ask(
        _replace(host_request(server, "root", "frozen", workdir), connect_timeout=connect_timeout)
    )
    failures: list[BaseException] = []

    async def call(n: int) -> None:
        try:
            await env.ask(ExecCommand(f"echo {n}"), timeout=None)
        except HostUnreachable as exc:
            failures.append(exc)

    os.kill(server.pid, signal.SIGSTOP)
    try:
        # Five calls one after another would need five connect timeouts; together
        # they share one attempt and fail with it.
        with trio.fail_after(connect_timeout * 3):
            async with trio.open_nursery() as nursery:
                for n in range(5):
                    nursery.start_soon(call, n)
        assert len(failures) == 5
        assert "connect_timeout" in str(failures[0])
        assert env.alive
    finally:
        os.kill(server.pid, signal.SIGCONT)
    with trio.fail_after(HANG_GUARD):
        assert (await env.ask(ExecCommand("echo back"))).stdout == "back\n"
        assert await env.ask(FileExists(str(workdir))) is True


def test_sshd_log_counts_connections(sshd_with: Callable[..., SSHServer]) -> None:
    """The check the limits test relies on: one 'Accepted publickey' line per login."""
    server = sshd_with()
    for _ in range(2):
        subprocess.run(
            [
                "ssh", "-i", str(server.client_key), "-p", str(server.port),
                "-o", f"UserKnownHostsFile={server.known_hosts}", "-o", "BatchMode=yes",
                "root@127.0.0.1", "true",
            ],
            check=True, capture_output=True, timeout=HANG_GUARD,
        )  # fmt: skip
    assert len(server.log_lines("Accepted publickey")) == 2


async def test_simultaneous_first_file_calls_share_one_sftp_session(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with(max_sessions=10, log_level="VERBOSE")  # VERBOSE logs each session
    workdir = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(server, "root", "files", workdir))
    answers: list[bool] = []

    async def probe(n: int) -> None:
        answers.append(await env.ask(FileExists(f"missing-{n}")))

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            for n in range(12):
                nursery.start_soon(probe, n)
        # The session limit is intact: commands still fill their channels.
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(env.ask, ExecCommand("sleep 0.5"))
    assert answers == [False] * 12
    assert len(server.log_lines("subsystem 'sftp'")) == 1


async def test_first_call_after_a_dropped_idle_connection_reconnects(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with()
    workdir = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(server, "root", "idle", workdir))
    assert (await env.ask(ExecCommand("echo warm"))).stdout == "warm\n"
    for pid in connection_tree(server):
        os.kill(pid, signal.SIGKILL)
    with trio.fail_after(HANG_GUARD):
        assert (await env.ask(ExecCommand("echo again"))).stdout == "again\n"


async def _time_out_on_frozen_sshd(
    server: SSHServer, runtime: Runtime, freeze_listener: bool
) -> tuple[ActorRef, list[object], list[int], list[int]]:
    """Start a TERM-ignoring command that times out (1.5 s) while its connection's
    sshd processes are stopped (and the listener too, if asked): the environment,
    the call's outcome, the command's pids, and the sshd pids left stopped."""
    workdir = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    request = _replace(
        host_request(server, "root", "hung", workdir),
        keepalive_interval=1.0,
        keepalive_count_max=2,
        connect_timeout=3.0,
    )
    env = await bridge.ask(request)
    outcome: list[object] = []

    async def run() -> None:
        command = ExecCommand(TERM_IGNORING.format(name="hung"), timeout_ms=1_500)
        try:
            outcome.append(await env.ask(command, timeout=None))
        except Exception as exc:  # ConnectionLost is as good an answer as a timeout
            outcome.append(exc)

    stopped: list[int] = []
    try:
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run)
                await _wait_for_files(workdir, ["hung"])
                stopped = connection_tree(server) + ([server.pid] if freeze_listener else [])
                for pid in stopped:
                    os.kill(pid, signal.SIGSTOP)
    except BaseException:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        raise
    return env, outcome, _pids(workdir, ["hung"]), stopped


async def test_timeout_on_a_hung_link_kills_the_command_over_a_fresh_connection(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with()
    _, outcome, pids, stopped = await _time_out_on_frozen_sshd(server, runtime, False)
    command, wrapper = pids  # $BASHPID, the command's own shell; $$, the wrapper
    try:
        assert len(outcome) == 1
        assert alive([command]) == [], "the call returned before its command was killed"
        # The wrapper is outside the command's group: it sees the group end and exits
        # on its own (its channel, on the stopped sshd, cannot tell the call so; on a
        # loaded machine that can come a moment after the call has returned).
        with trio.fail_after(HANG_GUARD):
            while alive([wrapper]):  # noqa: ASYNC110 - nothing to wait on but the host
                await trio.sleep(0.05)
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)


async def test_timeout_on_a_hung_host_kills_the_command_once_it_answers_again(
    sshd_with: Callable[..., SSHServer], runtime: Runtime
) -> None:
    server = sshd_with()
    env, outcome, pids, stopped = await _time_out_on_frozen_sshd(server, runtime, True)
    try:
        assert len(outcome) == 1
        assert alive(pids), "the kill could not have been delivered"
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    with trio.fail_after(HANG_GUARD):
        assert (await env.ask(ExecCommand("echo answered"))).stdout == "answered\n"
        while alive(pids):  # noqa: ASYNC110 - the owed kill runs on the new connection
            await trio.sleep(0.1)
