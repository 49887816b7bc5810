"""The persistent shell over a real bash: state kept, commands as data, timeouts."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import trio

from actors.kernel import Runtime
from environments.terminal import PersistentShell
from protocol.environment import CloseTerminal, RunInTerminal, TerminalOutput
from tests.environments.conftest import EnvUnderTest
from tests.waiting import HANG_GUARD, wait_until


async def open_shell(cwd: Path) -> tuple[trio.Process, PersistentShell]:
    process = await trio.lowlevel.open_process(
        ["bash", "--noprofile", "--norc"],
        cwd=str(cwd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    shell = PersistentShell(process.stdin, process.stdout)
    await shell.start()
    return process, shell


async def close(process: trio.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


async def test_directory_and_exports_persist(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    process, shell = await open_shell(tmp_path)
    try:
        first = await shell.run("cd sub && export GREETING=hello", 10)
        assert first.exit_code == 0 and first.working_dir == str(tmp_path / "sub")
        second = await shell.run('pwd; echo "$GREETING"', 10)
        assert second.output.splitlines() == [str(tmp_path / "sub"), "hello"]
        failing = await shell.run("echo oops >&2; false", 10)
        assert failing.exit_code == 1 and failing.output.strip() == "oops"
    finally:
        await close(process)


async def test_commands_are_data_not_script(tmp_path: Path) -> None:
    process, shell = await open_shell(tmp_path)
    try:
        broken = await shell.run('echo "unclosed', 10)
        assert broken.exit_code == 2 and "unexpected EOF" in broken.output
        after = await shell.run("echo still here", 10)
        assert after.output == "still here\n" and after.exit_code == 0
        reads = await shell.run("cat; echo read-done", 10)
        assert reads.output == "read-done\n"
        heredoc = await shell.run("cat <<'EOF'\n}\nEOF", 10)
        assert heredoc.output == "}\n"
    finally:
        await close(process)


async def test_exit_closes_the_terminal(tmp_path: Path) -> None:
    process, shell = await open_shell(tmp_path)
    try:
        result = await shell.run("exit 3", 10)
        assert result.closed and "closed" in result.output
        again = await shell.run("echo hi", 10)
        assert again.closed
    finally:
        await close(process)


async def test_timeout_reports_and_closes(tmp_path: Path) -> None:
    process, shell = await open_shell(tmp_path)
    try:
        result = await shell.run("echo started; sleep 30", 0.5)
        assert result.timed_out and result.closed
        assert result.output.startswith("started")
    finally:
        await close(process)


def real(path: Path) -> str:
    return os.path.realpath(path)


async def test_environment_terminal_keeps_state_and_close_ends_its_group(env: EnvUnderTest) -> None:
    """RunInTerminal / CloseTerminal on every environment kind."""
    (env.workdir / "sub").mkdir()

    async def run(command: str) -> TerminalOutput:
        with trio.fail_after(HANG_GUARD):
            return await env.ref.ask(RunInTerminal(command, "t1", 10_000))

    first = await run("cd sub && export GREETING=kept")
    assert first.exit_code == 0
    assert first.working_dir == real(env.workdir / "sub")
    second = await run("echo $GREETING; sleep 300 & echo $!; echo $$; false")
    greeting, background, shell_pid = second.output.split()
    assert (greeting, second.exit_code, second.closed) == ("kept", 1, False)
    pids = [int(background), int(shell_pid)]
    assert env.alive(pids) == pids
    assert await env.ref.ask(CloseTerminal("t1")) is True
    await wait_until(lambda: not env.alive(pids), what="the terminal's group to end")
    assert await env.ref.ask(CloseTerminal("t1")) is False
    fresh = await run("pwd")
    assert fresh.output.strip() == real(env.workdir)
    assert await env.ref.ask(CloseTerminal("t1")) is True


async def test_stopping_the_environment_ends_its_terminals(
    env: EnvUnderTest, runtime: Runtime
) -> None:
    with trio.fail_after(HANG_GUARD):
        started = await env.ref.ask(RunInTerminal("sleep 300 & echo $! $$", "t2", 10_000))
    pids = [int(pid) for pid in started.output.split()]
    assert env.alive(pids) == pids
    with trio.fail_after(HANG_GUARD):
        await runtime.stop(env.ref)
    await wait_until(lambda: not env.alive(pids), what="the terminal's group to end")
