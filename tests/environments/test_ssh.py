"""SSH-only behaviour: dropped connections, host key checks, config aliases."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import trio
import trio.testing

from actors.kernel import Runtime
from actors.kernel.ref import Ask
from environments.capture import HeadTail
from environments.errors import ConnectionLost, HostKeyRejected, InvalidRequest
from environments.shell.markers import MarkerFilter
from environments.shell.scripts import Markers
from environments.ssh.bridge import SSHBridge
from environments.ssh.command import DELTA_BATCH_CAP, SKIPPED_NOTE, RemoteCommand
from environments.ssh.target import SSHTarget, parse_target
from protocol.environment import AddSSHHost, ExecCommand, FileExists
from tests.environments.conftest import host_request
from tests.environments.helpers import alive, running_in
from tests.environments.sshd import SSHServer, connection_processes
from tests.waiting import wait_until_nothing_runs_in, workers_per_cpu

HANG_GUARD = 30 * workers_per_cpu()  # stretched where workers share a CPU


async def test_killed_connection_fails_in_flight_work_and_the_next_call_reconnects(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(sshd, "root", "box", tmp_path))
    assert (await env.ask(ExecCommand("echo warm"))).stdout == "warm\n"
    before = set(connection_processes(sshd))
    outcome: list[BaseException] = []

    async def long_command() -> None:
        try:
            # $$ in the command is the wrapper's pid (a subshell keeps its parent's $$).
            await env.ask(ExecCommand("echo $$ > wrapper.pid; sleep 30", timeout_ms=60_000))
        except ConnectionLost as exc:
            outcome.append(exc)

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(long_command)
            while not (tmp_path / "wrapper.pid").exists():  # noqa: ASYNC110 - written remotely
                await trio.sleep(0.02)
            for pid in before:  # the processes serving this connection
                os.kill(pid, signal.SIGKILL)
    assert len(outcome) == 1, "the in-flight command fails with ConnectionLost"
    assert "connection lost" in str(outcome[0])
    with trio.fail_after(HANG_GUARD):
        assert (await env.ask(ExecCommand("echo back"))).stdout == "back\n"
        # The command the lost link left running, and so its wrapper, is ended once
        # we reconnect (also when its group report was lost with the link).
        wrapper = int((tmp_path / "wrapper.pid").read_text())
        while alive([wrapper]):  # noqa: ASYNC110 - the orphan kill runs on the new link
            await trio.sleep(0.05)


async def test_a_caller_that_leaves_while_its_command_starts_leaves_no_process(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    """The caller gives up after sshd has started the command but before the start
    has reached the caller's task: what a loaded machine does when the trio thread
    gets no CPU for a while, held here on purpose. The command is still ended."""
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(sshd, "root", "box", tmp_path))
    request = Ask(ExecCommand("echo up > up; sleep 600", timeout_ms=60_000))
    assert env.offer(request)
    await trio.testing.wait_all_tasks_blocked()  # the handler waits for its start
    # The trio thread is held (no checkpoint) until the command runs on the host:
    # whatever the asyncio side has done with the start has not reached the handler.
    deadline = time.monotonic() + HANG_GUARD
    while not (tmp_path / "up").exists():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.01)  # noqa: ASYNC251 - holding the trio thread is the point
    request.abandon()
    try:
        with trio.fail_after(HANG_GUARD):
            await request.done.wait()
        await wait_until_nothing_runs_in(tmp_path)
    finally:
        for pid in running_in(tmp_path):  # a failed run leaves nothing behind either
            os.kill(pid, signal.SIGKILL)


async def test_unknown_host_key_is_refused(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(
        AddSSHHost(
            target=f"ssh://root@127.0.0.1:{sshd.port}",
            name="stranger",
            working_dir=str(tmp_path),
            known_hosts=str(empty),
            client_keys=[str(sshd.client_key)],
        )
    )
    with pytest.raises(HostKeyRejected, match="host key not trusted"):
        await env.ask(FileExists("anything"))
    assert env.alive, "a refused host is an error for the call, not a crash of the actor"


async def test_changed_host_key_is_refused(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    other = tmp_path / "other_key"
    await trio.run_process(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)])
    key_type, key_data = other.with_suffix(".pub").read_text().split()[:2]
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[127.0.0.1]:{sshd.port} {key_type} {key_data}\n")
    bridge = await runtime.spawn(SSHBridge())
    request = host_request(sshd, "root", "impostor", tmp_path)
    env = await bridge.ask(
        AddSSHHost(
            **{
                **{f: getattr(request, f) for f in request.__struct_fields__},
                "known_hosts": str(wrong),
            }
        )
    )
    with pytest.raises(HostKeyRejected):
        await env.ask(ExecCommand("true"))


async def test_config_alias_supplies_host_port_user_and_identity(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    config = tmp_path / "ssh_config"
    config.write_text(
        f"""Host build-box
    HostName 127.0.0.1
    Port {sshd.port}
    User root
    IdentityFile {sshd.client_key}
    UserKnownHostsFile {sshd.known_hosts}
"""
    )
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(
        AddSSHHost(
            target="build-box",
            name="build-box",
            working_dir=str(tmp_path),
            known_hosts=str(sshd.known_hosts),
            config_files=[str(config)],
        )
    )
    result = await env.ask(ExecCommand("id -un"))
    assert result.stdout == "root\n"


def test_targets_parse() -> None:
    assert parse_target("ssh://deploy@10.0.0.5:2222") == SSHTarget("10.0.0.5", 2222, "deploy")
    assert parse_target("ssh://host") == SSHTarget("host")
    assert parse_target("build-box") == SSHTarget("build-box")
    for bad in ("ssh://", "ssh://u@h:notaport", "user@host", "ssh://h/path"):
        with pytest.raises(InvalidRequest):
            parse_target(bad)


def test_a_watcher_that_falls_behind_is_told_live_output_was_skipped() -> None:
    """The asyncio side keeps a bounded batch of deltas; past it, one note, not silence."""
    command = RemoteCommand(
        pool=None,  # type: ignore[arg-type] - only the delta batch is exercised here
        remote=None,  # type: ignore[arg-type]
        markers=MarkerFilter(Markers("test")),
        stdout=HeadTail(),
        stderr=HeadTail(),
        want_deltas=True,
    )
    chunk = b"x" * 65_536
    for _ in range(DELTA_BATCH_CAP // len(chunk) + 3):
        command._offer("stdout", chunk)
    texts = [data for _, data in command._deltas]
    assert texts.count(SKIPPED_NOTE) == 1
    assert sum(len(t) for t in texts if t is not SKIPPED_NOTE) == DELTA_BATCH_CAP
