"""Commands in the OS sandbox, through the environment actors: a read-only system,
a writable working directory with read-only protected paths, no network but
loopback, hidden credentials (against the host's HOME), a PID namespace of its
own, the kill ladder leaving nothing behind, the probe, and typed refusals where
the sandbox cannot be had."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from environments.errors import SandboxUnavailable
from environments.local import LocalEnvironment
from environments.sandbox import find_bwrap
from protocol.environment import (
    CloseTerminal,
    Describe,
    ExecCommand,
    RunInTerminal,
    Sandbox,
)
from tests.environments.helpers import survivors
from tests.waiting import wait_until, wait_until_no_survivors

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bwrap missing")

THREAD_IDLE_S = 0.5
"""trio's worker-thread idle limit in the thread test (10 s in trio)."""


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch directory the sandbox sees as it is (not under its private /tmp)."""
    directory = Path(tempfile.mkdtemp(prefix="troupe-sandbox-test-", dir="/var/tmp"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def confined(workdir: Path, **options: object) -> Sandbox:
    return Sandbox(writable=(str(workdir),), **options)  # type: ignore[arg-type]


def stubborn_grandchild(marker: str) -> str:
    """A command that starts a background grandchild which ignores SIGTERM and
    would run for an hour, says so, and then waits."""
    return (
        f"bash -c 'trap \"\" TERM; sleep 3600; : {marker}' </dev/null >/dev/null 2>&1 & "
        "echo started; wait"
    )


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
async def test_loopback_works_inside_the_sandbox(tmp_path: Path, runtime: Runtime) -> None:
    """No network is not no sockets: a test server and its client inside one
    command talk over the sandbox's own loopback."""
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    script = (
        "import socket\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "c = socket.create_connection(s.getsockname()); a, _ = s.accept()\n"
        "c.sendall(b'ping'); print(a.recv(4).decode())\n"
    )
    (tmp_path / "loop.py").write_text(script)
    done = await ref.ask(ExecCommand("python3 loop.py", sandbox=confined(tmp_path)), timeout=30)
    assert (done.exit_code, done.stdout) == (0, "ping\n"), done.stderr


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
    wrote = await ref.ask(ExecCommand("echo x > secrets/planted", sandbox=sandbox))
    assert wrote.exit_code != 0
    assert (secrets / "id_key").read_text() == "private"
    assert not (secrets / "planted").exists()
    unconfined = await ref.ask(ExecCommand("cat secrets/id_key"))
    assert unconfined.stdout == "private"


@needs_bwrap
async def test_home_paths_are_hidden_against_the_hosts_home(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch, outside_tmp: Path
) -> None:
    """``~/.ssh`` in the policy means the environment's own HOME: a fake one here
    (outside /tmp, which is private in the sandbox), holding fake secrets, none of
    them readable from the sandbox."""
    home = outside_tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("FAKE-PRIVATE-KEY")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("FAKE-AWS-SECRET")
    (home / ".netrc").write_text("machine x password FAKE-NETRC")
    (home / "notes.txt").write_text("visible")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ref = await runtime.spawn(LocalEnvironment(work))
    sandbox = confined(work, hidden=("~/.ssh", "~/.aws", "~/.netrc"))
    command = "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc ~/notes.txt; ls -A ~/.ssh"
    shown = await ref.ask(ExecCommand(command, sandbox=sandbox))
    assert "FAKE" not in shown.stdout + shown.stderr
    assert "visible" in shown.stdout
    written = await ref.ask(ExecCommand("echo x > ~/notes.txt", sandbox=sandbox))
    assert written.exit_code != 0 and (home / "notes.txt").read_text() == "visible"


@needs_bwrap
async def test_protected_paths_stay_read_only_inside_the_workspace(
    tmp_path: Path, runtime: Runtime
) -> None:
    """``.git/hooks``, ``.git/config`` and ``.troupe`` are read-only, and cannot be
    swapped out by renaming their parent; the rest of the repository works."""
    work = tmp_path / "work"
    work.mkdir()
    await trio.run_process(["git", "init", "-q", str(work)])
    (work / ".troupe").mkdir()
    (work / ".troupe" / "config.toml").write_text("# mine\n")
    config_before = (work / ".git" / "config").read_text()
    ref = await runtime.spawn(LocalEnvironment(work))
    sandbox = confined(
        work, protected=tuple(str(work / p) for p in (".git/hooks", ".git/config", ".troupe"))
    )
    attempts = [
        "echo evil > .git/hooks/pre-commit",
        "git config core.fsmonitor evil",
        "echo evil >> .git/config",
        "echo evil > .troupe/config.toml",
        "rm -rf .troupe",
        "mv .git .git-old",
        "mv .git/hooks .git/hooks-old",
        "mv .troupe .troupe-old",
    ]
    for attempt in attempts:
        done = await ref.ask(ExecCommand(attempt, sandbox=sandbox))
        assert done.exit_code != 0, attempt
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert (work / ".git" / "config").read_text() == config_before
    assert (work / ".troupe" / "config.toml").read_text() == "# mine\n"
    assert not (work / ".git-old").exists() and not (work / ".troupe-old").exists()
    flow = (
        "echo 'print(1)' > app.py && git add app.py && "
        "git -c user.name=t -c user.email=t@example.com commit -qm first && "
        "git status --short app.py && git log --oneline | wc -l"
    )
    done = await ref.ask(ExecCommand(flow, sandbox=sandbox), timeout=30)
    assert (done.exit_code, done.stdout.split()) == (0, ["1"]), done.stderr


@needs_bwrap
async def test_own_pid_namespace_hides_troupe(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/proc`` shows only the sandbox: Troupe's process, its root and its
    environment (where a provider key lives) are out of reach."""
    canary = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("TROUPE_TEST_PROVIDER_API_KEY", canary)
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    command = (
        f"cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {canary}; "
        f"ls /proc/{os.getpid()}/root/ 2>&1 | head -1; ls -d /proc/[0-9]* | wc -l"
    )
    done = await ref.ask(ExecCommand(command, sandbox=confined(tmp_path)))
    found, root_listing, processes = done.stdout.splitlines()
    assert found == "0"
    assert "No such file" in root_listing
    assert int(processes) < 10
    # Unconfined, the same line finds Troupe's own process: the test can fail.
    plain = await ref.ask(ExecCommand(f"ls -d /proc/{os.getpid()}"))
    assert plain.exit_code == 0


@needs_bwrap
async def test_timeout_leaves_no_process_behind(tmp_path: Path, runtime: Runtime) -> None:
    marker = f"troupe-orphan-{uuid.uuid4().hex}"
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    request = ExecCommand(stubborn_grandchild(marker), timeout_ms=1_000, sandbox=confined(tmp_path))
    result = await ref.ask(request, timeout=30)
    assert result.timed_out and "started" in result.stdout
    await wait_until_no_survivors(marker)


@needs_bwrap
async def test_abort_leaves_no_process_behind(tmp_path: Path, runtime: Runtime) -> None:
    marker = f"troupe-orphan-{uuid.uuid4().hex}"
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    command = stubborn_grandchild(marker)
    request = ExecCommand(command, timeout_ms=60_000, sandbox=confined(tmp_path))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ref.ask, request)
        await wait_until(lambda: bool(survivors(marker)), what="the grandchild to start")
        nursery.cancel_scope.cancel()  # the caller gives up: an abort
    await wait_until_no_survivors(marker)


@needs_bwrap
async def test_normal_exit_and_shutdown_leave_no_process_behind(
    tmp_path: Path, runtime: Runtime
) -> None:
    marker = f"troupe-orphan-{uuid.uuid4().hex}"
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    background = (
        f"bash -c 'trap \"\" TERM; sleep 3600; : {marker}' </dev/null >/dev/null 2>&1 & echo ok"
    )
    done = await ref.ask(ExecCommand(background, sandbox=confined(tmp_path)))
    assert done.stdout == "ok\n"
    await wait_until_no_survivors(marker)
    # A persistent sandboxed terminal with the same grandchild, ended by the
    # environment's shutdown.
    terminal = RunInTerminal(background, "t1", sandbox=confined(tmp_path))
    assert "ok" in (await ref.ask(terminal)).output
    # The terminal's background job lives while the terminal does.
    await wait_until(lambda: bool(survivors(marker)), what="the terminal's background job")
    await runtime.stop(ref)
    await wait_until_no_survivors(marker)


@needs_bwrap
async def test_persistent_terminal_runs_in_one_sandbox(tmp_path: Path, runtime: Runtime) -> None:
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    sandbox = confined(tmp_path)
    (tmp_path / "sub").mkdir()

    async def run(command: str) -> str:
        return (await ref.ask(RunInTerminal(command, "t", sandbox=sandbox))).output

    assert "Read-only file system" in await run("touch /etc/troupe-terminal")
    assert not _exists("/etc/troupe-terminal")
    await run("cd sub && export KEPT=yes && echo $$ > ../shell.pid")
    assert (await run("pwd; echo $KEPT; echo $$")).split() == [
        str(tmp_path / "sub"),
        "yes",
        (tmp_path / "shell.pid").read_text().strip(),
    ]
    # The same shell: its pid is the sandbox's, not the host's.
    assert int((tmp_path / "shell.pid").read_text()) < 10
    marker = f"troupe-orphan-{uuid.uuid4().hex}"
    await run(f"bash -c 'trap \"\" TERM; sleep 3600; : {marker}' </dev/null >/dev/null 2>&1 &")
    assert await ref.ask(CloseTerminal("t"))
    await wait_until_no_survivors(marker)


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
    info = await ref.ask(Describe())
    assert info.sandbox is not None and not info.sandbox.available
    assert info.sandbox.reason == "bwrap not found"
    with pytest.raises(SandboxUnavailable, match="bwrap not found"):
        await ref.ask(ExecCommand("echo hi > made.txt", sandbox=confined(tmp_path)))
    assert not (tmp_path / "made.txt").exists()
    optional = confined(tmp_path, required=False)
    with caplog.at_level(logging.WARNING, logger="troupe.environments"):
        ran = await ref.ask(ExecCommand("echo hi", sandbox=optional))
        again = await ref.ask(ExecCommand("echo again", sandbox=optional))
    assert (ran.stdout, again.stdout) == ("hi\n", "again\n")
    said = [r.message for r in caplog.records if "without the OS sandbox" in r.message]
    assert len(said) == 1, "said once, not per command"


async def test_a_bwrap_that_does_not_run_is_found_out_by_the_probe(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed is not working (user namespaces off, no setuid): the probe runs it
    once and the environment says why it cannot sandbox."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    calls = tmp_path / "calls"
    fake.write_text(
        f"#!/bin/sh\necho x >> {calls}\n"
        "echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    environment = LocalEnvironment(tmp_path)
    monkeypatch.undo()
    ref = await runtime.spawn(environment)
    with pytest.raises(SandboxUnavailable, match="setting up uid map"):
        await ref.ask(ExecCommand("echo hi > made.txt", sandbox=confined(tmp_path)))
    ran = await ref.ask(ExecCommand("echo hi", sandbox=confined(tmp_path, required=False)))
    info = await ref.ask(Describe())
    assert ran.stdout == "hi\n"
    assert info.sandbox is not None and "uid map" in info.sandbox.reason
    assert calls.read_text() == "x\n", "probed once per environment"


def _exists(path: str) -> bool:
    return Path(path).exists()


@needs_bwrap
async def test_sandboxes_outlive_the_thread_that_started_them(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trio starts processes from worker threads that exit after 10 idle seconds,
    and bwrap's --die-with-parent follows the thread, not the process: a command
    or a persistent terminal running longer than that must not be killed with it.

    The threads' idle limit is made 0.5 s here (trio reads it each time a worker
    goes idle), so a 3 s command outlives its thread as a 12 s one outlived 10 s."""
    monkeypatch.setattr(trio._core._thread_cache, "IDLE_TIMEOUT", THREAD_IDLE_S)
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    sandbox = confined(tmp_path)
    opened = await ref.ask(RunInTerminal("echo $$", "t", sandbox=sandbox))
    shell = opened.output.strip()
    long = ExecCommand("sleep 3; echo done", timeout_ms=60_000, sandbox=sandbox)
    done = await ref.ask(long, timeout=90)
    assert (done.exit_code, done.stdout) == (0, "done\n")
    later = await ref.ask(RunInTerminal("echo $$", "t", sandbox=sandbox))
    assert (later.closed, later.output.strip()) == (False, shell)
