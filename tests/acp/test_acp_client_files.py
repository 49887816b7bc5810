"""The editor's file system and terminals over ACP: a client advertising
``fs.readTextFile`` and ``fs.writeTextFile`` (the official SDK's client, answering
from in-memory buffers that differ from the disk) gets the session's reads and
writes, the disk does not; one advertising ``terminal`` runs the session's
commands in its terminals where the session's sandbox is off, and a cancel kills
them; with the sandbox on (the default) they stay in the session's own sandbox."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.acp.test_acp_sdk_client import HANG_GUARD, drive, scripted_provider
from tests.environments.helpers import alive


def sandbox_off(tmp_path: Path) -> dict[str, str]:
    """The environment of a ``troupe acp`` whose sessions run commands without the
    OS sandbox (the user's config names the ``permissive`` policy): only then does
    the editor's terminal run them, since it cannot confine them."""
    config = tmp_path / "config.toml"
    config.write_text('policy = "permissive"\n')
    return {**os.environ, "TROUPE_CONFIG": str(config)}


def test_reads_and_writes_go_through_the_editors_buffers(tmp_path: Path):
    work = tmp_path.resolve() / "work"
    work.mkdir()
    notes = work / "notes.txt"
    notes.write_text("saved on disk\n")
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "notes.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "file_path": "notes.txt", "old_string": "unsaved", "new_string": "edited"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {
            "file_path": "new.txt", "content": "fresh\n"}}]},
        {"text": "Done."},
    ]  # fmt: skip
    buffers = {str(notes): "unsaved buffer\nsecond line\n"}
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["edit notes"], buffers=buffers)
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        ends = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"]
        assert [end["status"] for end in ends] == ["completed"] * 3, ends
        read_output = ends[0]["content"][0]["content"]["text"]
        assert "unsaved buffer" in read_output and "saved on disk" not in read_output
        assert result["buffers"][str(notes)] == "edited buffer\nsecond line\n"
        assert result["buffers"][str(work / "new.txt")] == "fresh\n"
        assert notes.read_text() == "saved on disk\n", "the disk is left alone"
        assert not (work / "new.txt").exists()
        requests = result["fsRequests"]
        assert {r["sessionId"] for r in requests} == {result["sessionId"]}
        assert all(Path(r["path"]).is_absolute() for r in requests)
        writes = [(r["path"], r["content"]) for r in requests if r["method"] == "write"]
        assert writes == [
            (str(notes), "edited buffer\nsecond line\n"),
            (str(work / "new.txt"), "fresh\n"),
        ]


def test_commands_run_in_the_editors_terminal(tmp_path: Path):
    command = "echo to-out; echo to-err >&2; exit 3"
    turns = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"text": "Ran it."},
    ]
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["run it"], terminal=True, env=sandbox_off(tmp_path))
        assert "error" not in result, result
        work = str(tmp_path.resolve() / "work")
        requests = result["terminalRequests"]
        create = requests[0]
        assert (create["method"], create["command"], create["args"], create["cwd"]) == (
            "create", "bash", ["-c", command], work,
        )  # fmt: skip
        assert create["sessionId"] == result["sessionId"]
        assert [r["method"] for r in requests][-1] == "release"
        (call,) = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call"]
        shown = [
            u for u in result["updates"]
            if u["sessionUpdate"] == "tool_call_update" and u.get("content")
            and u["content"][0]["type"] == "terminal"
        ]  # fmt: skip
        assert [u["toolCallId"] for u in shown] == [call["toolCallId"]]
        assert shown[0]["content"][0]["terminalId"] == "term-1"
        end = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"][-1]
        output = end["content"][0]["content"]["text"]
        assert "to-out" in output and "to-err" in output and "3" in output


def test_cancel_kills_the_command_in_the_editors_terminal(tmp_path: Path):
    marker = tmp_path / "sleeper.pid"
    turns = [
        {"tool_calls": [{"name": "shell", "arguments": {
            "command": f"echo $$ > {marker}; exec sleep 300"}}]},
        {"text": "never reached"},
    ]  # fmt: skip
    for url in scripted_provider(tmp_path, turns):
        result = drive(
            tmp_path, url, prompts=["sleep"], terminal=True, cancelWhenExists=str(marker),
            env=sandbox_off(tmp_path),
        )  # fmt: skip
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "cancelled"}]
        assert [r["method"] for r in result["terminalRequests"]][-1] == "release"
        sleeper = int(marker.read_text())
        deadline = time.monotonic() + HANG_GUARD
        while alive([sleeper]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive([sleeper]) == []


def test_a_command_past_its_timeout_is_killed_in_the_terminal(tmp_path: Path):
    turns = [
        {"tool_calls": [{"name": "shell", "arguments": {
            "command": "echo started; exec sleep 60", "timeout_ms": 500}}]},
        {"text": "Gave up."},
    ]  # fmt: skip
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["wait"], terminal=True, env=sandbox_off(tmp_path))
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        methods = [r["method"] for r in result["terminalRequests"]]
        assert methods == ["create", "wait_for_exit", "kill", "wait_for_exit", "output", "release"]
        end = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"][-1]
        output = end["content"][0]["content"]["text"]
        assert "started" in output and "timed out" in output.lower(), output


def test_with_the_sandbox_on_commands_stay_out_of_the_editors_terminal(tmp_path: Path):
    """The default sandbox holds for an editor offering a terminal: the command runs
    in the session's sandbox (a file it writes outside the workspace, approved, lands
    in the sandbox's private /tmp, not on the host), and the editor is never asked
    to run it."""
    outside = tmp_path.resolve() / "outside.txt"
    assert outside.parts[1] == "tmp", "the proof needs a path in the private /tmp"
    command = f"echo escaped > {outside} && cat {outside}"
    turns = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"text": "Tried."},
    ]
    for url in scripted_provider(tmp_path, turns):
        result = drive(
            tmp_path, url, prompts=["write outside"], terminal=True, permissions=["allow_once"]
        )
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        assert result["terminalRequests"] == []
        end = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"][-1]
        output = end["content"][0]["content"]["text"]
        assert "escaped" in output and "exit code: 0" in output, output
        assert not outside.exists(), "written in the sandbox's /tmp, not the host's"
