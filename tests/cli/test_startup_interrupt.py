"""Ctrl-C while ``troupe`` starts (issue 31, item 10): one line and exit 130, never
a traceback, for ``troupe run -p``, ``troupe serve`` and the interactive
conversation in a real pty, including a SIGINT that lands while modules load.

The command is the installed console script (``.venv/bin/troupe``), since its
entry point is where the first handler must sit. The moments are not guessed
delays but what the process has done: with ``PYTHONPROFILEIMPORTTIME=1`` Python
writes a line to stderr as each import finishes, and the SIGINT is sent when a
given module has been imported (Troupe's entry point, the CLI, trio), so it lands
in the imports that follow. "Immediately after spawn" may land before Python has
installed its own handler: then the process ends by the signal itself (what a
shell reports as 130) and prints nothing, or, inside Python's own ``site``
import, Python reports a fatal error; both happen before any Troupe code runs and
are allowed there only. One more thing is CPython's, not Troupe's: a
KeyboardInterrupt raised inside the import system's weakref callback
(``_get_module_lock.<locals>.cb``) is printed as "Exception ignored" and dropped;
the user's second Ctrl-C then ends the command, and the test presses it too.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm
from tests.cli.terminal import Terminal

TROUPE = Path(sys.executable).with_name("troupe")
SLOW = {"turns": [{"text": "never seen", "delay": 30}]}
IMPORTS = "import time:"


def console_script() -> list[str]:
    script = TROUPE.read_text()
    if "actors.console" not in script:
        pytest.fail(f"{TROUPE} is stale (run `pip install -e .`): its entry point moved")
    return [str(TROUPE)]


def imported(line: str, module: str) -> bool:
    return line.startswith(IMPORTS) and line.rsplit("|", 1)[-1].strip() == module


DROPPED = "Exception ignored in: <function _get_module_lock.<locals>.cb"
PYTHON_START = "Fatal Python error: init_import_site"


def without_dropped(text: str) -> str:
    """The text without CPython's report of an interrupt it dropped (module doc)."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        if DROPPED in line:
            skipping = True
        elif skipping and line.strip().startswith("KeyboardInterrupt"):
            skipping = False
        elif not skipping:
            kept.append(line)
    return "\n".join(kept)


def check_interrupted(returncode: int, stderr: str, immediate: bool) -> None:
    if immediate and PYTHON_START in stderr:
        return  # Python's own start, before any Troupe code (module doc)
    stderr = without_dropped(stderr)
    lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith(IMPORTS)]
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    if immediate and returncode == -signal.SIGINT:
        assert lines == [], stderr  # ended by the signal before Python's handler: silent
        return
    assert returncode == 130, (returncode, stderr)
    assert len(lines) == 1 and lines[0].startswith("troupe") and "interrupted" in lines[0], stderr


MOMENTS = [None, "actors.console", "actors.cli", "trio"]
"""None: immediately after spawn; otherwise the module whose import comes just before."""


def spawn(argv: list[str], home: Home) -> subprocess.Popen[str]:
    env = {**home.env, "PYTHONPROFILEIMPORTTIME": "1"}
    return subprocess.Popen(
        argv, cwd=home.work, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


async def interrupt_at(argv: list[str], home: Home, moment: str | None) -> None:
    process = spawn(argv, home)
    assert process.stderr is not None
    stream = process.stderr
    seen: list[str] = []
    watchdog = threading.Timer(HANG_GUARD, process.kill)  # blocking reads end with it
    watchdog.start()
    try:
        while moment is not None:
            line = await trio.to_thread.run_sync(stream.readline)
            assert line, f"{moment} was never imported:\n{''.join(seen)}"
            seen.append(line)
            if imported(line, moment):
                break
        process.send_signal(signal.SIGINT)
        while line := await trio.to_thread.run_sync(stream.readline):
            seen.append(line)
            if DROPPED in line:
                process.send_signal(signal.SIGINT)  # the user's second Ctrl-C
        code = await trio.to_thread.run_sync(process.wait)
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code != -signal.SIGKILL, f"still running {HANG_GUARD} s after the SIGINT"
    check_interrupted(code, "".join(seen), immediate=moment is None)


@pytest.mark.parametrize("moment", MOMENTS, ids=lambda m: m or "at-spawn")
async def test_ctrl_c_while_run_starts_is_one_line_and_130(home: Home, moment: str | None) -> None:
    async with mock_llm(SLOW) as mock:
        argv = [*console_script(), "run", "-p", "hello", "--base-url", mock.base_url]
        await interrupt_at(argv, home, moment)
        assert not [r for r in mock.requests if r.method == "POST"] or moment == "trio"


@pytest.mark.parametrize("moment", MOMENTS, ids=lambda m: m or "at-spawn")
async def test_ctrl_c_while_serve_starts_is_one_line_and_130(
    home: Home, moment: str | None
) -> None:
    await interrupt_at([*console_script(), "serve", "--port", "0"], home, moment)


@pytest.mark.parametrize(
    "moment", [None, "actors.console", "actors.cli"], ids=lambda m: m or "at-spawn"
)
async def test_ctrl_c_while_the_conversation_starts_in_a_pty(
    home: Home, moment: str | None
) -> None:
    """Ctrl-C typed at the terminal (the line discipline's SIGINT), before the prompt
    takes the keyboard (after that it is a key: tests/cli/test_interactive.py)."""
    async with mock_llm(SLOW) as mock:
        env = {**home.env, "PYTHONPROFILEIMPORTTIME": "1", "TERM": "xterm-256color"}
        argv = [*console_script(), "--base-url", mock.base_url]
        terminal = Terminal(argv, home.work, env)
        try:
            with trio.fail_after(HANG_GUARD):
                if moment is not None:
                    await terminal.expect(f" {moment}\n")
                await terminal.type("\x03")
                try:
                    await terminal.expect(DROPPED)
                    await terminal.type("\x03")  # the user's second Ctrl-C
                except AssertionError:
                    pass  # the command ended
                code = await terminal.finish()
        finally:
            await terminal.aclose()
    check_interrupted(code, terminal.screen.replace("^C", ""), immediate=moment is None)


async def test_ctrl_c_stops_a_listening_server_cleanly(home: Home) -> None:
    """docs/cli.md: once it is up, Ctrl-C is how ``troupe serve`` is stopped: a clean
    stop, exit 0 (while it is still starting, the tests above: 130)."""
    process = home.start("serve", "--port", "0", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    line = await trio.to_thread.run_sync(process.stdout.readline)
    assert line.startswith(b"troupe server listening on "), line
    process.send_signal(signal.SIGINT)
    _, err = await trio.to_thread.run_sync(lambda: process.communicate(timeout=HANG_GUARD))
    assert process.returncode == 0, err
    assert b"Traceback" not in err


_LOADING_COMMAND = """
import os, signal, sys
os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C while the command's modules load
import colorsys  # and an import after it: CPython could drop it inside one
print("loaded", file=sys.stderr, flush=True)


def run(args):
    print("ran", file=sys.stderr, flush=True)
    return 0
"""

_THROUGH_THE_CONSOLE = """
import sys
sys.path.insert(0, sys.argv.pop(1))
from actors.console import main  # blocks SIGINT, as the console script's import does
import actors.cli
actors.cli.ELSEWHERE["mock-llm"] = "loading_command"  # a command whose import is interrupted
sys.argv = ["troupe", "mock-llm"]
sys.exit(main())
"""


def test_a_ctrl_c_while_the_command_loads_is_held_until_it_has_loaded(tmp_path: Path) -> None:
    """The signal is not raised inside the imports (where CPython drops a
    KeyboardInterrupt raised in its module lock's weakref callback, and a ``troupe
    serve`` interrupted there went on serving): it is held until the command's
    module has loaded, then is the usual one line and 130, before the command runs."""
    (tmp_path / "loading_command.py").write_text(_LOADING_COMMAND)
    done = subprocess.run(
        [sys.executable, "-c", _THROUGH_THE_CONSOLE, str(tmp_path)],
        capture_output=True, text=True, timeout=HANG_GUARD, cwd=tmp_path,
    )  # fmt: skip
    lines = done.stderr.splitlines()
    assert done.returncode == 130, done.stderr
    assert lines[0] == "loaded", done.stderr  # the import went on to its end
    assert len(lines) == 2 and lines[1].startswith("troupe") and "interrupted" in lines[1]
