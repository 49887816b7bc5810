"""A subagent runs its parent's hooks and knows its parent's skills and commands
(real session actors, real local environment, the scripted provider with one
conversation per agent): PreToolUse blocks in the child too, SubagentStop (not
Stop) fires when the child ends its turn, and the child's first request names the
parent's skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol.events import HookRunEvent
from tests.session.conftest import StartAgent
from tests.session.scripts import body_text, call
from tests.session.test_subagents import conversations


async def test_a_subagent_inherits_hooks_skills_and_commands(
    start_agent: StartAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("HOME", str(home))
    (config / "troupe").mkdir(parents=True)
    block = {"type": "command", "command": "echo 'no rm in agents' >&2; exit 2"}
    stopped = {"type": "command", "command": 'cat >> "$CLAUDE_PROJECT_DIR/stops.jsonl"'}
    (config / "troupe" / "hooks.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [block]}],
        "SubagentStop": [{"hooks": [stopped]}],
        "Stop": [{"hooks": [stopped]}],
    }}))  # fmt: skip
    skill = home / ".agents" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write notes.\n---\nx\n")
    script = conversations(
        [[call("spawn_agent", task="CHILD task")], [call("wait", agent_ids=["a-1"])], "all done"],
        **{"CHILD task": [[call("shell", command="rm -rf x")], "child done"]},
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("PARENT: delegate")
        child = [b for b in agent.request_bodies() if "CHILD task" in body_text(b)
                 and "PARENT" not in body_text(b)]  # fmt: skip
        assert child
        assert "release-notes: Write notes." in body_text(child[0])
        assert "no rm in agents" in body_text(child[-1])
        stops = [
            json.loads(line) for line in (agent.workdir / "stops.jsonl").read_text().splitlines()
        ]
    assert [s["hook_event_name"] for s in stops] == ["SubagentStop", "Stop"]
    assert stops[0]["last_assistant_message"] == "child done"
    parent_runs = [r.event for r in agent.of(HookRunEvent)]
    assert parent_runs == ["Stop"], "the child's runs are in the child's events"
