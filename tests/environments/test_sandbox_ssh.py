"""The OS sandbox on an SSH host (a real sshd on loopback): the same profile through
the host's own bwrap, probed once per environment, with ``~`` meaning the remote
login's HOME; a sandboxed persistent terminal; and nothing left behind by the kill
ladder."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.kernel import ActorRef, Runtime
from environments.sandbox import find_bwrap
from environments.ssh.bridge import SSHBridge
from protocol.environment import CloseTerminal, Describe, ExecCommand, RunInTerminal, Sandbox
from tests.environments.conftest import host_request
from tests.environments.helpers import survivors
from tests.environments.sshd import TEST_USER, SSHServer
from tests.environments.test_sandbox_exec import stubborn_grandchild
from tests.waiting import wait_until, wait_until_no_survivors

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bwrap missing on the ssh host")


@pytest.fixture
def home_secret() -> Iterator[str]:
    """A fake secret directory in the login's (root's) home, as ``~/...``."""
    name = f".troupe-test-secret-{uuid.uuid4().hex}"
    directory = Path.home() / name
    directory.mkdir()
    (directory / "key").write_text("FAKE-REMOTE-SECRET")
    try:
        yield f"~/{name}"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def _host(runtime: Runtime, sshd: SSHServer, workdir: Path, user: str = "root") -> ActorRef:
    bridge = await runtime.spawn(SSHBridge(), name="environments/ssh")
    return await bridge.ask(host_request(sshd, user, f"sandbox-{user}", workdir))


async def test_remote_commands_run_in_the_hosts_bwrap(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path, home_secret: str
) -> None:
    workdir = Path("/var/tmp") / f"troupe-ssh-sandbox-{uuid.uuid4().hex}"
    workdir.mkdir()
    try:
        (workdir / ".troupe").mkdir()
        ref = await _host(runtime, sshd, workdir)
        info = await ref.ask(Describe())
        assert info.sandbox is not None and info.sandbox.available, info.sandbox
        sandbox = Sandbox(
            writable=(str(workdir),),
            protected=(str(workdir / ".troupe"),),
            hidden=(home_secret,),
            required=True,
        )
        command = (
            "touch /etc/troupe-ssh-sandboxed; echo ok > made.txt; echo x > .troupe/plant; "
            f"cat {home_secret}/key; ls -d /proc/[0-9]* | wc -l"
        )
        done = await ref.ask(ExecCommand(command, sandbox=sandbox), timeout=60)
        assert "Read-only file system" in done.stderr
        assert not _exists("/etc/troupe-ssh-sandboxed")
        assert (workdir / "made.txt").read_text() == "ok\n"
        assert not (workdir / ".troupe" / "plant").exists()
        assert "FAKE-REMOTE-SECRET" not in done.stdout
        assert int(done.stdout.split()[-1]) < 10
        # Unconfined, the same host shows the secret: the test can fail.
        plain = await ref.ask(ExecCommand(f"cat {home_secret}/key"))
        assert plain.stdout == "FAKE-REMOTE-SECRET"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


async def test_remote_timeout_and_terminal_leave_nothing_behind(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    workdir = tmp_path / "remote"
    workdir.mkdir()
    ref = await _host(runtime, sshd, workdir)
    sandbox = Sandbox(writable=(str(workdir),))
    marker = f"troupe-orphan-{uuid.uuid4().hex}"
    request = ExecCommand(stubborn_grandchild(marker), timeout_ms=1_000, sandbox=sandbox)
    result = await ref.ask(request, timeout=60)
    assert result.timed_out and "started" in result.stdout
    await wait_until_no_survivors(marker)

    async def run(command: str) -> str:
        return (await ref.ask(RunInTerminal(command, "t", sandbox=sandbox), timeout=60)).output

    assert "Read-only file system" in await run("touch /etc/troupe-ssh-terminal")
    await run("cd / && export KEPT=yes")
    assert (await run("pwd; echo $KEPT")).split() == ["/", "yes"]
    marker = f"troupe-orphan-{uuid.uuid4().hex}"
    await run(f"bash -c 'trap \"\" TERM; sleep 3600; : {marker}' </dev/null >/dev/null 2>&1 &")
    await wait_until(lambda: bool(survivors(marker)), what="the terminal's background job")
    assert await ref.ask(CloseTerminal("t"), timeout=60)
    await wait_until_no_survivors(marker)


async def test_an_unprivileged_login_gets_the_sandbox_or_the_reason(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    """Whether bwrap runs for a plain user depends on the host (user namespaces):
    the probe says which, and a required sandbox is refused with that reason."""
    if TEST_USER not in sshd.users:
        pytest.skip("no unprivileged login")
    from tests.environments.conftest import owned_directory

    workdir = owned_directory(TEST_USER)
    try:
        ref = await _host(runtime, sshd, workdir, TEST_USER)
        state = (await ref.ask(Describe())).sandbox
        assert state is not None
        sandbox = Sandbox(writable=(str(workdir),))
        if state.available:
            done = await ref.ask(ExecCommand("touch /etc/x-troupe; echo ok", sandbox=sandbox))
            assert done.stdout == "ok\n" and "Read-only" in done.stderr
        else:
            with pytest.raises(Exception, match="cannot sandbox"):
                await ref.ask(ExecCommand("echo hi", sandbox=sandbox))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _exists(path: str) -> bool:
    return Path(path).exists()
