"""Adding a tool is its definition plus its registration (docs/extending.md, "Add
a tool"): a toy tool, registered in a real session's registry and named nowhere
else, gets its declared output limits, its policy category, its path parameter
judged like a built-in's, and its kind shown by the ACP host's updates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from actors.acp.updates import update_of
from protocol.events import PolicyDecisionEvent, ToolCallEndEvent, ToolCallStartEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import body_text, call, turns
from tests.session.toy_tool import LONG, TALLY


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``outside/canary.txt`` next to the working directory, a fake HOME with
    ``~/.aws/credentials`` (a denied path), and the user's own config directory."""
    root = Path(os.path.realpath(tmp_path)) / "outside"
    (root / "home" / ".aws").mkdir(parents=True)
    (root / "home" / ".aws" / "credentials").write_text("aws_secret_access_key=FAKE\n")
    (root / "canary.txt").write_text("canary\n")
    monkeypatch.setenv("HOME", str(root / "home"))
    (root / "config" / "troupe").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
    return root


async def test_a_toy_tool_gets_its_declared_facts_from_its_definition_alone(
    start_agent: StartAgent, places: Path
) -> None:
    canary = str(places / "canary.txt")
    secret = str(places / "home" / ".aws" / "credentials")
    script = turns(
        [call("tally", file_path="notes.txt")],
        [call("write_file", file_path="w.txt", content="w")],
        [call("tally", file_path=canary)],
        [call("read_file", file_path=canary)],
        [call("tally", file_path=secret)],
        [call("read_file", file_path=secret)],
        "done",
    )
    # Writes are denied and reads confined to the working directory: what the
    # toy may do follows from its declared category and path parameter.
    config = SessionConfig(policy_overrides={"write": "deny", "confine_reads": True})
    async with start_agent("anthropic", script, config, registry_extra=[TALLY]) as agent:
        (agent.workdir / "notes.txt").write_text("notes\n")
        await agent.run("go")

    tallied, written, outside, read_outside, secret_end, read_secret = agent.of(ToolCallEndEvent)
    # Its category: a read under a policy that denies writes runs; a write does not.
    assert not tallied.is_error and tallied.output.endswith(LONG)  # the event: all of it
    assert written.is_error and "Denied by policy" in written.output
    decisions = {d.call_id: d for d in agent.of(PolicyDecisionEvent)}
    assert decisions[tallied.call_id].category == "read"
    assert decisions[tallied.call_id].action == "allow"

    # Its path parameter: resolved (the tool got the real path) and judged exactly
    # as read_file's is, outside the working directory and in a denied path.
    assert f"tallied {agent.workdir / 'notes.txt'}" in tallied.output
    assert outside.is_error and "outside the allowed paths" in outside.output
    assert outside.output == read_outside.output
    assert secret_end.is_error and "denied path" in secret_end.output
    assert secret_end.output == read_secret.output
    assert "FAKE" not in secret_end.output

    # Its output limits: the model read the last 300 characters, with the marker.
    after_tally = body_text(agent.request_bodies()[1])
    removed = len(tallied.output) - 300
    assert f"First {removed} characters were removed" in after_tally
    assert "x" * 297 + "END" in after_tally and "x" * 298 not in after_tally

    # Its kind: in the event, and as the ACP host shows the call to an editor.
    start = next(s for s in agent.of(ToolCallStartEvent) if s.call_id == tallied.call_id)
    assert start.tool_kind == "search"
    update = update_of(start, str(agent.workdir))
    assert update is not None and update["kind"] == "search"


async def test_hooks_match_the_toy_tool_by_the_names_it_declares(
    start_agent: StartAgent, places: Path
) -> None:
    blocked = {"type": "command", "command": 'cat > "$CLAUDE_PROJECT_DIR/seen.json"; exit 2'}
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Tally", "hooks": [blocked]}]}}
    (places / "config" / "troupe" / "hooks.json").write_text(json.dumps(hooks))
    script = turns([call("tally", file_path="notes.txt")], "done")
    async with start_agent("anthropic", script, registry_extra=[TALLY]) as agent:
        await agent.run("go")
        seen = json.loads((agent.workdir / "seen.json").read_text())
    (end,) = agent.of(ToolCallEndEvent)
    assert end.is_error and "Blocked by a PreToolUse hook" in end.output
    assert seen["tool_name"] == "Tally"


async def test_a_yaml_tool_declares_its_kind_in_its_file(
    start_agent: StartAgent, places: Path
) -> None:
    (places / "config" / "troupe" / "tools.yaml").write_text(
        "tools:\n"
        "  - {name: lines, category: read, kind: search, cmd: wc, args: ['-l', 'notes.txt']}\n"
        "  - {name: words, category: read, cmd: wc, args: ['-w', 'notes.txt']}\n"
    )
    script = turns([call("lines")], [call("words")], "done")
    async with start_agent("anthropic", script) as agent:
        (agent.workdir / "notes.txt").write_text("one two\n")
        await agent.run("go")
    lines, words = agent.of(ToolCallStartEvent)
    assert (lines.tool_kind, words.tool_kind) == ("search", "other")
    assert [end.is_error for end in agent.of(ToolCallEndEvent)] == [False, False]
    update = update_of(lines, str(agent.workdir))
    assert update is not None and update["kind"] == "search"
