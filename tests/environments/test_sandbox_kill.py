"""Ending a sandboxed command leaves nothing of it behind, even when the kill comes
while bwrap is still setting the sandbox up.

bwrap's PID 1 in the sandbox binds itself to the outer bwrap (``--die-with-parent``)
only at the very end of its setup, after it has started the command. A command
killed in between (a shutdown just after a start on a loaded machine: the
background agents of a session that ends at once) used to leave that PID 1 and the
command running for good, with PPID 1, once the PID 1 had left the command's
process group (``--new-session``). Here that window is held open for certain: a
``bwrap`` first on PATH runs the real one with ``--lock-file`` on a FIFO nobody
writes, which the PID 1 opens (and blocks in) just before it would bind itself.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from environments.local import LocalEnvironment
from environments.sandbox import find_bwrap
from protocol.environment import ExecCommand, Sandbox
from tests.environments.helpers import survivors
from tests.waiting import HANG_GUARD, TEST_KILL_GRACE, wait_until, wait_until_no_survivors

REAL_BWRAP = find_bwrap()
pytestmark = pytest.mark.skipif(REAL_BWRAP is None, reason="bwrap missing")

LOOPS = {
    "plain": "while true; do sleep 0.05; done",
    "traps-sigterm": "trap '' TERM; while true; do sleep 0.05; done",
}


def slow_setup_bwrap(tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put a ``bwrap`` first on PATH that runs the real one, for the commands that
    hold ``marker``, with a lock file its PID 1 can never open (the probe and other
    commands run it unchanged)."""
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "bwrap"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$*" in *{marker}*) exec {REAL_BWRAP} --lock-file {fifo} "$@";; esac\n'
        f'exec {REAL_BWRAP} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    assert shutil.which("bwrap") == str(wrapper)


def the_command_runs(marker: str) -> bool:
    """The command itself (not only bwrap, whose command line holds it too) runs:
    the sandbox's PID 1 has forked it and is stuck on the lock file."""
    return any(line.split(None, 1)[1].startswith("bash") for line in survivors(marker))


def command(loop: str, marker: str) -> str:
    return f"echo started; {loop}  # {marker}"


async def start(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch, marker: str
) -> Callable[[ExecCommand], Awaitable[object]]:
    slow_setup_bwrap(tmp_path, marker, monkeypatch)
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    monkeypatch.undo()  # the environment found the wrapper; nothing else needs it
    return lambda request: ref.ask(request, timeout=HANG_GUARD)


def sandboxed(tmp_path: Path, loop: str, marker: str, timeout_ms: int) -> ExecCommand:
    sandbox = Sandbox(writable=(str(tmp_path),))
    return ExecCommand(command(loop, marker), timeout_ms=timeout_ms, sandbox=sandbox)


@pytest.mark.parametrize("loop", LOOPS.values(), ids=LOOPS.keys())
async def test_a_timeout_mid_setup_leaves_nothing(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    marker = f"troupe-setup-{uuid.uuid4().hex}"
    ask = await start(tmp_path, runtime, monkeypatch, marker)
    result = await ask(sandboxed(tmp_path, loop, marker, timeout_ms=3_000))
    assert getattr(result, "timed_out", False)
    assert "started" in getattr(result, "stdout", ""), "killed while the command ran"
    await wait_until_no_survivors(marker)


@pytest.mark.parametrize("loop", LOOPS.values(), ids=LOOPS.keys())
async def test_an_abort_mid_setup_leaves_nothing(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    marker = f"troupe-setup-{uuid.uuid4().hex}"
    ask = await start(tmp_path, runtime, monkeypatch, marker)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, sandboxed(tmp_path, loop, marker, timeout_ms=600_000))
        await wait_until(lambda: the_command_runs(marker), what="the command to start")
        nursery.cancel_scope.cancel()  # the caller gives up: an abort
    await wait_until_no_survivors(marker)


@pytest.mark.parametrize("loop", LOOPS.values(), ids=LOOPS.keys())
async def test_a_runtime_shutdown_mid_setup_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    marker = f"troupe-setup-{uuid.uuid4().hex}"
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ask = await start(tmp_path, runtime, monkeypatch, marker)
        outcome: list[BaseException] = []

        async def ask_and_keep_the_failure() -> None:
            try:
                await ask(sandboxed(tmp_path, loop, marker, timeout_ms=600_000))
            except Exception as failure:  # the environment stops under the call
                outcome.append(failure)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask_and_keep_the_failure)
            await wait_until(lambda: the_command_runs(marker), what="the command to start")
            with trio.fail_after(HANG_GUARD):
                await runtime.shutdown()
            nursery.cancel_scope.cancel()
    await wait_until_no_survivors(marker)


REPO = Path(__file__).resolve().parents[2]
PROBE = (
    "read -r stat < /proc/self/stat; set -- ${stat##*) }; echo tty=$5; "
    "(exec 3</dev/tty) 2>/dev/null && echo opened || echo no-tty"
)
IN_A_TERMINAL = f"""
import sys, trio
from pathlib import Path
from actors.kernel import Runtime
from environments.local import LocalEnvironment
from protocol.environment import ExecCommand, Sandbox

async def main():
    work = sys.argv[1]
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    print("troupe-tty=" + fields[4], flush=True)  # this process's own terminal
    async with Runtime() as runtime:
        ref = await runtime.spawn(LocalEnvironment(Path(work)))
        done = await ref.ask(ExecCommand({PROBE!r}, sandbox=Sandbox(writable=(work,))))
        print("command " + " ".join(done.stdout.split()), flush=True)

trio.run(main)
"""


async def test_a_sandboxed_command_has_no_controlling_terminal(tmp_path: Path) -> None:
    """What bwrap's ``--new-session`` would add (no terminal to push input into with
    TIOCSTI) holds without it: the command starts as a session of its own, with no
    controlling terminal, even when Troupe itself runs in one. Troupe runs here
    under ``script``, which gives it a pseudo-terminal as its controlling terminal
    (checked: its own tty number is not 0, so the test cannot pass for want of one)."""
    if shutil.which("script") is None:
        pytest.skip("needs script(1) (util-linux) to give Troupe a terminal")
    program = tmp_path / "in_a_terminal.py"
    program.write_text(IN_A_TERMINAL)
    work = tmp_path / "work"
    work.mkdir()
    line = f"{shlex.quote(sys.executable)} {program} {shlex.quote(str(work))}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with trio.fail_after(HANG_GUARD):
        done = await trio.run_process(
            ["script", "-qec", line, "/dev/null"], capture_stdout=True, capture_stderr=True,
            check=False, env=env, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    out = done.stdout.decode().replace("\r", "")
    assert done.returncode == 0, (out, done.stderr.decode())
    lines = out.splitlines()
    assert "troupe-tty=0" not in lines and any(x.startswith("troupe-tty=") for x in lines), out
    assert "command tty=0 no-tty" in lines, out
