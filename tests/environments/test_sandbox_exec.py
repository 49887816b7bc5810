"""Commands in the OS sandbox, through the environment actors: a read-only system,
a writable working directory, no network, hidden credentials, the kill ladder, and
typed refusals where the sandbox cannot be had."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from actors.kernel import Runtime
from environments.errors import SandboxUnavailable
from environments.local import LocalEnvironment
from environments.sandbox import find_bwrap
from environments.ssh.bridge import SSHBridge
from protocol.environment import ExecCommand, Sandbox
from tests.environments.conftest import host_request
from tests.environments.sshd import SSHServer
from tests.waiting import wait_until_gone

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bwrap missing")


def confined(workdir: Path, **options: object) -> Sandbox:
    return Sandbox(writable=(str(workdir),), **options)  # type: ignore[arg-type]


@needs_bwrap
async def test_system_read_only_workdir_writable_no_network(
    tmp_path: Path, runtime: Runtime
) -> None:
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    sandbox = confined(tmp_path)
    touched = await ref.ask(ExecCommand("touch /etc/troupe-sandboxed", sandbox=sandbox))
    assert touched.exit_code != 0 and "Read-only file system" in touched.stderr
    assert not _exists("/etc/troupe-sandboxed")
    made = await ref.ask(ExecCommand("echo ok > made.txt && cat made.txt", sandbox=sandbox))
    assert (made.exit_code, made.stdout) == (0, "ok\n")
    assert (tmp_path / "made.txt").read_text() == "ok\n"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        curl = f"curl -sS --max-time 5 {url}"
        blocked = await ref.ask(ExecCommand(curl, sandbox=sandbox, timeout_ms=20_000))
        assert blocked.exit_code != 0 and "connect" in blocked.stderr.lower()
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the listener
        allowed = confined(tmp_path, network=True)
        # With the network allowed the same command reaches it (curl then times out
        # waiting for an HTTP answer that never comes; the connection is what counts).
        reached = ExecCommand(f"curl -sS --max-time 1 {url}", sandbox=allowed)
        await ref.ask(reached, timeout=20)
        connection, _ = listener.accept()
        connection.close()


@needs_bwrap
async def test_hidden_paths_are_empty_inside(tmp_path: Path, runtime: Runtime) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "id_key").write_text("private")
    token = tmp_path / "token.txt"
    token.write_text("t0ken")
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    sandbox = confined(tmp_path, hidden=(str(secrets), str(token)))
    shown = await ref.ask(ExecCommand("ls secrets; cat token.txt; echo end", sandbox=sandbox))
    assert shown.stdout == "end\n"
    assert (secrets / "id_key").read_text() == "private"
    unconfined = await ref.ask(ExecCommand("cat secrets/id_key"))
    assert unconfined.stdout == "private"


@needs_bwrap
async def test_kill_ladder_reaches_sandboxed_commands(tmp_path: Path, runtime: Runtime) -> None:
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    command = "sleep 60 & echo $! > pid; wait"
    result = await ref.ask(
        ExecCommand(command, timeout_ms=500, sandbox=confined(tmp_path)), timeout=30
    )
    assert result.timed_out
    # The sandbox shares our PID namespace, so the pid it wrote is the sleep's here.
    pid = int(_read(tmp_path / "pid"))
    await wait_until_gone([pid])


def _exists(path: str) -> bool:
    return Path(path).exists()


def _read(path: Path) -> str:
    return path.read_text()


async def test_missing_bwrap_is_a_typed_refusal_when_required(
    tmp_path: Path,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))  # no bwrap on this PATH
    environment = LocalEnvironment(tmp_path)
    monkeypatch.undo()
    ref = await runtime.spawn(environment)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        await ref.ask(ExecCommand("echo hi > made.txt", sandbox=confined(tmp_path)))
    assert not (tmp_path / "made.txt").exists()
    optional = confined(tmp_path, required=False)
    with caplog.at_level(logging.WARNING, logger="troupe.environments"):
        ran = await ref.ask(ExecCommand("echo hi", sandbox=optional))
        again = await ref.ask(ExecCommand("echo again", sandbox=optional))
    assert (ran.stdout, again.stdout) == ("hi\n", "again\n")
    said = [r.message for r in caplog.records if "without the OS sandbox" in r.message]
    assert len(said) == 1, "said once, not per command"


async def test_ssh_refuses_a_required_sandbox(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    bridge = await runtime.spawn(SSHBridge(), name="environments/ssh")
    workdir = tmp_path / "remote"
    workdir.mkdir()
    ref = await bridge.ask(host_request(sshd, "root", "sandbox-host", workdir))
    with pytest.raises(SandboxUnavailable, match="local commands only"):
        await ref.ask(ExecCommand("echo hi > made.txt", sandbox=confined(workdir)))
    assert not (workdir / "made.txt").exists()
    optional = confined(workdir, required=False)
    assert (await ref.ask(ExecCommand("echo hi", sandbox=optional))).stdout == "hi\n"
