"""Real parts for the asyncio-host tests: ``troupe mock-llm`` and ``troupe serve`` as
processes, scripts that run real shell commands, and ``ps`` to see what survived."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.environments.helpers import command_group
from tests.kernel.host_processes import running_in_group

__all__ = ["running_in_group"]

REPO = Path(__file__).resolve().parents[2]
HANG_GUARD = 30

SLOW_COMMAND = "echo $$ > slow.pid; echo started; exec sleep 60"
"""A command that records its process group and would run for a minute."""
LATE_COMMAND = "sleep 1.5; echo finished > late.txt"
"""A command that outlives a client that disconnects right after it starts."""


def _shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


SCRIPT: dict[str, Any] = {
    "conversations": [
        {"match": "quick", "turns": [_shell("echo hello from troupe"), {"text": "All done."}]},
        {"match": "slow", "turns": [_shell(SLOW_COMMAND), {"text": "Slow done."}]},
        {"match": "late", "turns": [_shell(LATE_COMMAND), {"text": "Late done."}]},
        {"match": "steer", "turns": [_shell("sleep 1"), {"text": "Steered."}]},
    ],
    "turns": [{"text": "Nothing scripted for this."}],
}


@contextlib.contextmanager
def process_printing_url(
    command: list[str], **options: Any
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start ``command`` in a session of its own; yield it with the URL ending its
    first line; stop its whole group on exit."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, cwd=REPO, start_new_session=True, **options
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first, f"{command[3]} exited: {process.wait(HANG_GUARD)}"
        yield process, first.split()[-1]
    finally:
        stop_process_group(process)


def stop_process_group(process: subprocess.Popen[Any]) -> None:
    """Stop a server started in a session of its own: SIGTERM to its group (a graceful
    stop, so its runtime runs the ladder), then SIGKILL to whatever is left of the
    group, such as workers whose leader is gone (hypercorn spawns one)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(HANG_GUARD)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(HANG_GUARD)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    (root / "work").mkdir()
    return root


@pytest.fixture
def mock_llm(work: Path) -> Iterator[str]:
    """``troupe mock-llm`` with :data:`SCRIPT`; yields its base URL."""
    script = work / "script.json"
    script.write_text(json.dumps(SCRIPT))
    command = [sys.executable, "-m", "actors.cli", "mock-llm", "--script", str(script)]
    with process_printing_url(command) as (_, url):
        yield url


def kill_group(pid_file: Path) -> None:
    """Clean up after a failed test: never leave the slow command behind (found
    on the host where it runs: the pid a sandboxed shell writes is its PID
    namespace's, which names another process here)."""
    group = command_group(pid_file.parent)
    if group is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


class Serve:
    """A running ``troupe serve``: its URL, token and process."""

    def __init__(self, process: subprocess.Popen[str], url: str, token: str) -> None:
        self.process = process
        self.url = url
        self.token = token


@pytest.fixture
def troupe_serve(work: Path, mock_llm: str) -> Iterator[Serve]:
    """``troupe serve`` on a free loopback port, its models at ``troupe mock-llm``."""
    data_dir = work / "serve-data"
    command = [
        sys.executable, "-m", "actors.cli", "serve", "--port", "0", "--data-dir", str(data_dir),
        "--workdir", str(work / "work"), "--base-url", mock_llm, "--api-key", "test-key",
    ]  # fmt: skip
    with process_printing_url(command) as (process, url):
        yield Serve(process, url, (data_dir / "token").read_text().strip())


def wait_for_line(path: Path, marker: str, process: subprocess.Popen[Any]) -> str:
    """The first line of the log at ``path`` containing ``marker``."""
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        for line in path.read_text(errors="replace").splitlines():
            if marker in line:
                return line
        assert process.poll() is None, f"exited {process.returncode}: {path.read_text()}"
        time.sleep(0.05)
    raise AssertionError(f"no {marker!r} in {path}: {path.read_text()}")


def wait_until(predicate: Callable[[], object], what: str) -> None:
    """Poll ``predicate`` (a fact only the host can tell, such as ``ps``) up to the guard."""
    deadline = time.monotonic() + HANG_GUARD
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.05)
