"""The local environment's ``bwrap`` probe is off a session's first model request
(issue 36): ``Describe(sandbox=False)``, what a session asks at its start, answers
without waiting for it and starts it in the background; a command with a sandbox
waits for its answer and runs confined, never unconfined because the probe had not
finished."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from environments.local import LocalEnvironment
from environments.sandbox import find_bwrap
from protocol.environment import Describe, ExecCommand, ExecResult, Sandbox
from tests.waiting import HANG_GUARD, wait_until

REAL_BWRAP = find_bwrap()
needs_bwrap = pytest.mark.skipif(REAL_BWRAP is None, reason="bwrap missing")


def _gated_bwrap(bin_dir: Path, calls: Path, gate: Path) -> None:
    """A ``bwrap`` whose probe (a run of ``true``) waits for a line on ``gate``; it
    records each call and then runs the real one."""
    script = bin_dir / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        'for last in "$@"; do :; done\n'
        'if [ "$last" = true ]; then\n'
        f"  echo probe-start >> {calls}\n"
        f"  read _ < {gate}\n"
        f"  echo probe-done >> {calls}\n"
        "else\n"
        f"  echo run >> {calls}\n"
        "fi\n"
        f'exec {REAL_BWRAP} "$@"\n'
    )
    script.chmod(0o755)


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


@needs_bwrap
async def test_describe_without_the_sandbox_does_not_wait_for_the_probe(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, calls, gate = tmp_path / "bin", tmp_path / "calls", tmp_path / "gate"
    bin_dir.mkdir()
    os.mkfifo(gate)
    _gated_bwrap(bin_dir, calls, gate)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    environment = LocalEnvironment(tmp_path)
    monkeypatch.undo()
    ref = await runtime.spawn(environment)

    with trio.fail_after(HANG_GUARD):  # the probe's gate is closed
        info = await ref.ask(Describe(sandbox=False))
    assert info.working_directory == str(environment.working_dir) and info.sandbox is None
    # the probe runs in the background, and has not finished: its gate is closed
    await wait_until(lambda: _lines(calls) == ["probe-start"], what="the probe to start")

    done: list[ExecResult] = []

    async def command() -> None:
        sandbox = Sandbox(writable=(str(tmp_path),), required=False)
        done.append(await ref.ask(ExecCommand("echo confined > made.txt", sandbox=sandbox)))

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(command)
            await trio.to_thread.run_sync(lambda: gate.write_text("open\n"))
    assert done[0].exit_code == 0 and (tmp_path / "made.txt").read_text() == "confined\n"
    # the command waited for the probe's answer and ran through bwrap, after it
    assert _lines(calls) == ["probe-start", "probe-done", "run"]
    described = await ref.ask(Describe())
    assert described.sandbox is not None and described.sandbox.available
    assert _lines(calls) == ["probe-start", "probe-done", "run"], "probed once"
