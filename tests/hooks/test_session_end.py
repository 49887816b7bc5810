"""SessionEnd runs when a session closes (a real session actor, a real local
environment, the scripted provider); the user's own hooks need no trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from protocol.events import HookRunEvent
from protocol.session import CloseSession
from tests.session.conftest import HANG_GUARD, StartAgent


async def test_session_end_runs_when_the_session_closes(
    start_agent: StartAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (config / "troupe").mkdir(parents=True)
    hook = {"type": "command", "command": 'cat > "$CLAUDE_PROJECT_DIR/ended.json"'}
    (config / "troupe" / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionEnd": [{"hooks": [hook]}]}})
    )
    async with start_agent("anthropic", {"turns": [{"text": "hi"}]}) as agent:
        await agent.run("hello")
        ended = agent.workdir / "ended.json"
        assert not ended.exists()
        await agent.ref.tell(CloseSession())
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("session_end")
    said = json.loads(ended.read_text())
    assert said["hook_event_name"] == "SessionEnd" and said["reason"] == "closed"
    runs = agent.of(HookRunEvent)
    assert [(r.event, r.outcome, r.exit_code) for r in runs] == [("SessionEnd", "ok", 0)]
