"""``troupe acp`` driven by the official ACP SDK's client (npm
``@agentclientprotocol/sdk``, run with Node.js), against ``troupe mock-llm``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.environments.helpers import running_in

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("client.mjs")
SDK = ROOT / ".npm-tools" / "node_modules" / "@agentclientprotocol" / "sdk" / "dist" / "acp.js"
HANG_GUARD = 60


def scripted_provider(tmp_path: Path, turns: list[dict[str, Any]]) -> Iterator[str]:
    script = tmp_path / "script.json"
    script.write_bytes(msgspec.json.encode({"turns": turns, "repeat": False}))
    command = [sys.executable, "-m", "actors.cli", "mock-llm", "--script", str(script)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        yield next(word for word in line.split() if word.startswith("http"))
    finally:
        process.terminate()
        process.wait()


def require_client() -> None:
    """Skip, saying why, where the SDK client cannot run."""
    if shutil.which("node") is None:
        pytest.skip("Node.js is missing (.ci/run installs it)")
    if not SDK.is_file():
        pytest.skip("npm package @agentclientprotocol/sdk@1 is not installed (.ci/run)")


def drive(
    tmp_path: Path,
    url: str,
    *,
    profile: str = "anthropic",
    env: dict[str, str] | None = None,
    command_extra: tuple[str, ...] | list[str] = (),
    **plan: Any,
) -> dict[str, Any]:
    """Run the SDK client against a fresh ``troupe acp``; its JSON summary.
    ``env``: the environment of the client and so of ``troupe acp``."""
    require_client()
    workdir = tmp_path.resolve() / "work"
    workdir.mkdir(exist_ok=True)
    data = str(tmp_path / "data")
    troupe = [sys.executable, "-m", "actors.cli", "acp", "--profile", profile,
              "--base-url", url, "--api-key", "test-key", "--data-dir", data,
              *command_extra]  # fmt: skip
    plan = {"sdk": str(SDK), "command": troupe, "cwd": str(workdir), **plan}
    done = subprocess.run(
        ["node", str(CLIENT), json.dumps(plan)],
        capture_output=True, text=True, timeout=HANG_GUARD, cwd=workdir, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["schemaErrors"] == [], "what the SDK's schemas reject"
    return result


def test_initialize_new_session_and_a_prompt_with_a_tool_call(tmp_path: Path):
    turns = [
        {"reasoning": "plan the file", "tool_calls": [
            {"name": "write_file", "arguments": {"file_path": "hello.txt", "content": "hi\n"}}]},
        {"text": "Wrote hello.txt."},
    ]  # fmt: skip
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["write hello.txt"])
        assert "error" not in result, result
        assert result["initialize"]["protocolVersion"] == 1
        assert result["sessionId"].startswith("s-")
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        updates = result["updates"]
        kinds = [update["sessionUpdate"] for update in updates]
        assert "agent_thought_chunk" in kinds
        (call,) = [u for u in updates if u["sessionUpdate"] == "tool_call"]
        assert (call["title"], call["kind"], call["status"]) == (
            "write_file",
            "edit",
            "in_progress",
        )
        (end,) = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
        assert (end["toolCallId"], end["status"]) == (call["toolCallId"], "completed")
        message = "".join(
            u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
        )
        assert message == "Wrote hello.txt."
        assert (tmp_path / "work" / "hello.txt").read_text() == "hi\n"
        assert result["exitCode"] == 0

        # A new `troupe acp` (same store) loads the session: its history as updates.
        loaded = drive(tmp_path, url, prompts=[], loadSessionId=result["sessionId"])
        assert "error" not in loaded, loaded
        replayed = loaded["updates"]
        assert loaded["loadedUpdates"] == len(replayed) > 0
        assert replayed[0] == {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "write hello.txt"},
        }
        (again,) = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
        assert again["content"] == call["content"]
        said = [
            u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert said == ["Wrote hello.txt."]
        assert drive(tmp_path, url, prompts=[], loadSessionId="s-nothere")["error"]


def test_cancel_mid_run_stops_the_command(tmp_path: Path):
    # The command runs sandboxed (the default): it marks its start inside the
    # workspace and is found on the host by the directory it sleeps in, since its
    # own $$ is its PID namespace's number.
    sleeping = tmp_path.resolve() / "work" / "sleeping"
    sleeping.mkdir(parents=True)
    marker = sleeping / "started"
    command = "cd sleeping && echo begun > started && exec sleep 300"
    turns = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"text": "never reached"},
    ]
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["sleep"], cancelWhenExists=str(marker))
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "cancelled"}]
        assert result["exitCode"] == 0
        assert marker.exists(), "the command ran"
        deadline = time.monotonic() + HANG_GUARD
        while running_in(sleeping) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running_in(sleeping) == []
        (end,) = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"]
        assert end["status"] == "failed"


def test_mcp_servers_from_the_editor_and_sessions_in_the_store(tmp_path: Path):
    fixture = ROOT / "tests" / "mcp" / "fixture_server.py"
    turns = [
        {"tool_calls": [{"name": "fx__echo", "arguments": {"text": "from zed"}}]},
        {"text": "ok"},
    ]
    server = {"name": "fx", "command": sys.executable, "args": [str(fixture)], "env": []}
    session_id = ""
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, prompts=["echo"], mcpServers=[server])
        assert "error" not in result, result
        (end,) = [u for u in result["updates"] if u["sessionUpdate"] == "tool_call_update"]
        assert end["status"] == "completed"
        assert end["content"][0]["content"]["text"] == "echo: from zed"
        session_id = result["sessionId"]
    listing = subprocess.run(
        [sys.executable, "-m", "actors.cli", "sessions", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=HANG_GUARD,
    )  # fmt: skip
    assert session_id and session_id in listing.stdout


def test_update_plan_reaches_the_editor_as_a_plan(tmp_path: Path):
    steps = [
        {"step": "Write hello.txt", "status": "completed"},
        {"step": "Check it", "status": "in_progress"},
        {"step": "Report", "status": "pending"},
    ]
    turns = [
        {"tool_calls": [{"name": "update_plan", "arguments": {"plan": steps}}]},
        {"text": "Planned."},
    ]
    for url in scripted_provider(tmp_path, turns):
        result = drive(tmp_path, url, profile="openai", prompts=["make a plan"])
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        updates = result["updates"]
        (plan,) = [u for u in updates if u["sessionUpdate"] == "plan"]
        assert plan["entries"] == [
            {"content": step["step"], "priority": "medium", "status": step["status"]}
            for step in steps
        ]
        kinds = {u["sessionUpdate"] for u in updates}
        assert not kinds & {"tool_call", "tool_call_update"}, "the plan is not a tool call"
