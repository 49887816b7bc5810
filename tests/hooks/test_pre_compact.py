"""PreCompact hooks around a real compaction (scripted provider over loopback):

- a manual compaction fires PreCompact with ``trigger: manual`` and the user's
  instructions, and the hook's stdout reaches the summary request the model gets;
- a blocking PreCompact hook skips the automatic compaction at the threshold (a
  warning says so), and the session still completes its input.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import trio

from protocol.events import CompactionStartEvent, HookRunEvent, WarningEvent
from protocol.session import Compact, CompactionOutcome
from tests.session.test_compaction import (
    BIG_FILE,
    GUARD,
    TRANSCRIPT_MARKER,
    base_config,
    script,
    serve_mock_llm,
    session,
)


def user_hook(config_home: Path, command: str) -> None:
    """The user's own PreCompact hook (user hooks run without trust)."""
    hooks = {"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": command}]}]}}
    (config_home / "troupe").mkdir(parents=True, exist_ok=True)
    (config_home / "troupe" / "hooks.json").write_text(json.dumps(hooks))


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = Path(os.path.realpath(tmp_path))
    work = root / "work"
    work.mkdir()
    (work / "big.txt").write_text(BIG_FILE)
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
    monkeypatch.setenv("CODEX_HOME", str(root / "home" / ".codex"))
    return work


async def test_a_manual_compaction_runs_pre_compact_and_keeps_its_context(
    workdir: Path,
) -> None:
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    user_hook(config_home, "cat >/dev/null; echo 'Also keep the TODO list verbatim.'")
    config = base_config(compaction="manual", compaction_keep_turns=1)
    async with serve_mock_llm(script(4, 1_000_000)) as mock, session(workdir, mock, config) as run:
        await run.input("run the rounds")
        with trio.fail_after(GUARD):
            outcome: CompactionOutcome = await run.ref.ask(
                Compact("keep the file names"), timeout=None
            )
        await run.input("and now?")
    assert outcome.kind == "summary"
    summary_request = next(r for r in mock.requests if TRANSCRIPT_MARKER.encode() in r.body)
    assert b"keep the file names" in summary_request.body
    assert b"Also keep the TODO list verbatim." in summary_request.body
    runs = [e for e in run.of(HookRunEvent) if e.event == "PreCompact"]
    assert [(r.exit_code, r.outcome) for r in runs] == [(0, "context")]


async def test_a_blocking_pre_compact_skips_the_automatic_compaction(workdir: Path) -> None:
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    user_hook(config_home, "cat >/dev/null; echo 'not now' >&2; exit 2")
    config = base_config(
        compaction="auto", context_window=6_000, compaction_keep_rounds=1, compaction_keep_turns=1
    )
    async with serve_mock_llm(script(12, 6_000)) as mock, session(workdir, mock, config) as run:
        await run.input("run the rounds")
    assert run.of(HookRunEvent), "the PreCompact hook ran"
    assert all(e.outcome == "block" for e in run.of(HookRunEvent) if e.event == "PreCompact")
    skipped = [w for w in run.of(WarningEvent) if "compaction skipped: not now" in w.message]
    assert skipped
    starts = run.of(CompactionStartEvent)
    assert all(s.reason != "threshold" for s in starts), "no threshold compaction ran"
    assert any(s.reason == "overflow" for s in starts), "an overflow still compacts"
