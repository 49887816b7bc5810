"""The session list's times and order (issue 31, point 7): a run changes the
"updated" time of its own session only, the list is newest first, and
``troupe sessions | head -1`` ends cleanly."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm


def listed(done: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


async def test_a_run_touches_only_its_own_session_and_the_newest_is_first(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        common = ("run", "--base-url", mock.base_url, "--output-format", "json")
        for task in ("first task", "second task"):
            assert (await home.troupe(*common, task)).returncode == 0
        before = {s["task"]: s["updated"] for s in listed(await home.troupe("sessions", "--json"))}
        assert (await home.troupe(*common, "third task")).returncode == 0
        after = listed(await home.troupe("sessions", "--json"))
    assert [s["task"] for s in after] == ["third task", "second task", "first task"]
    assert {s["task"]: s["updated"] for s in after[1:]} == before, "untouched sessions kept"
    text = await home.troupe("sessions")
    lines = text.stdout.decode().splitlines()
    assert "third task" in lines[1] and "first task" in lines[3]


async def test_sessions_into_a_closed_pipe_ends_cleanly(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        for n in range(3):
            done = await home.troupe("run", "--base-url", mock.base_url, f"task {n}")
            assert done.returncode == 0, done.stderr
    for args in (("sessions",), ("sessions", "--json")):
        read, write = os.pipe()
        os.close(read)  # the reader (head -1) is gone before the listing is written
        try:
            with trio.fail_after(HANG_GUARD):
                done = await trio.run_process(
                    home.argv(*args), stdout=write, capture_stderr=True, check=False,
                    cwd=home.work, env=home.env, stdin=subprocess.DEVNULL,
                )  # fmt: skip
        finally:
            os.close(write)
        assert done.returncode == 0, done.stderr
        assert done.stderr == b"", done.stderr


async def test_sessions_piped_to_head(home: Home) -> None:
    """The shell form a user types."""
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "only task")
        assert done.returncode == 0, done.stderr
    command = " ".join(f"'{part}'" for part in home.argv("sessions"))
    with trio.fail_after(HANG_GUARD):
        shell = await trio.run_process(
            ["bash", "-c", f"set -o pipefail; {command} | head -1"], capture_stdout=True,
            capture_stderr=True, check=False, cwd=home.work, env=home.env,
        )  # fmt: skip
    assert shell.stdout.decode().startswith("SESSION")
    assert b"Broken pipe" not in shell.stderr and shell.returncode == 0, shell.stderr
