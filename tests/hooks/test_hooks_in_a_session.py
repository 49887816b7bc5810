"""Issue 35's hooks acceptance: a repository with a Claude Code
``.claude/settings.json`` (a PreToolUse hook that blocks ``rm`` with exit code 2, a
PostToolUse hook that logs) and a Codex ``.codex/hooks.json`` (a UserPromptSubmit
hook that adds context, a PreToolUse hook that denies ``curl`` with a JSON answer),
run by a real ``troupe run`` against the scripted provider over loopback: the
hooks do what those tools document, run in the sandbox, appear in ``troupe
audit``, and do not run at all until the project is trusted (one line says so)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Home, mock_llm, request_bodies, shell_then_text, text_of

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

BLOCK_RM = """\
import json, sys
call = json.load(sys.stdin)
command = call["tool_input"].get("command", "")
if call["tool_name"] == "Bash" and command.split()[:1] == ["rm"]:
    print(f"rm is not allowed here (hook saw {call['hook_event_name']})", file=sys.stderr)
    sys.exit(2)
"""

LOG = """\
import json, os, pathlib, sys
call = json.load(sys.stdin)
try:  # outside the workspace: the sandbox keeps it read-only
    (pathlib.Path.home() / "escaped.txt").write_text("out")
    confined = False
except OSError:
    confined = True
log = pathlib.Path(os.environ["CLAUDE_PROJECT_DIR"]) / "tool-calls.log"
with log.open("a") as file:
    file.write(f"{call['tool_name']} {call['tool_input'].get('command')} "
               f"error={call['tool_response']['is_error']} confined={confined}\\n")
"""

DENY_CURL = """\
import json, sys
call = json.load(sys.stdin)
if "curl" in call["tool_input"].get("command", ""):
    answer = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
              "permissionDecisionReason": "no network tools, says codex"}
    print(json.dumps({"hookSpecificOutput": answer}))
"""


def plant(work: Path) -> None:
    hooks = work / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "block_rm.py").write_text(BLOCK_RM)
    (hooks / "log.py").write_text(LOG)
    settings: dict[str, Any] = {
        "permissions": {"allow": []},  # another tool's keys are left alone
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command",
                 "command": 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/block_rm.py'}]}],
            "PostToolUse": [{"matcher": "Bash|Write", "hooks": [
                {"type": "command", "command": 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/log.py"',
                 "timeout": 30}]}],
        },
    }  # fmt: skip
    (work / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    codex = work / ".codex"
    codex.mkdir()
    (codex / "deny_curl.py").write_text(DENY_CURL)
    (codex / "hooks.json").write_text(json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "echo 'codex-context: sprint 42 is frozen'"}]}],
        "PreToolUse": [{"matcher": "^Bash$", "hooks": [
            {"type": "command", "command": "python3 .codex/deny_curl.py"}]}],
    }}))  # fmt: skip
    (work / "build").mkdir()


SCRIPT = shell_then_text("rm -rf build", "echo hi > out.txt", "curl -s http://example.com")


@needs_bwrap
async def test_claude_and_codex_hooks_behave_as_documented(home: Home) -> None:
    plant(home.work)
    assert (await home.troupe("trust")).returncode == 0
    async with mock_llm(SCRIPT) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "--output-format", "json",
                                 "tidy up")  # fmt: skip
        assert done.returncode == 0, done.stderr
        bodies = request_bodies(mock)
    assert len(bodies) == 4
    assert "codex-context: sprint 42 is frozen" in text_of(bodies[0])
    after_rm = text_of(bodies[1])
    assert "Blocked by a PreToolUse hook: rm is not allowed here (hook saw PreToolUse)" in after_rm
    assert (home.work / "build").is_dir()
    assert (home.work / "out.txt").read_text() == "hi\n"
    assert "no network tools, says codex" in text_of(bodies[3])
    log = (home.work / "tool-calls.log").read_text().splitlines()
    assert log == ["Bash echo hi > out.txt error=False confined=True"], "only calls that ran"
    assert not (home.root / "home" / "escaped.txt").exists(), "the hook ran outside the sandbox"

    session = json.loads(done.stdout)["session_id"]
    audit = await home.troupe("audit", session, "--json")
    assert audit.returncode == 0, audit.stderr
    runs = [json.loads(line)["data"] for line in audit.stdout.decode().splitlines()]
    runs = [r for r in runs if "event" in r and "outcome" in r]
    seen = [(r["event"], r["source"].rsplit("/", 2)[-2:][0], r["outcome"]) for r in runs]
    assert ("UserPromptSubmit", ".codex", "context") in seen
    assert ("PreToolUse", ".claude", "block") in seen
    assert ("PreToolUse", ".codex", "deny") in seen
    assert ("PostToolUse", ".claude", "ok") in seen
    text = (await home.troupe("audit", session)).stdout.decode()
    assert "hook  PreToolUse shell: block (exit 2)" in text


async def test_an_untrusted_projects_hooks_do_not_run_and_one_line_says_so(home: Home) -> None:
    plant(home.work)
    async with mock_llm(SCRIPT) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "tidy up")
        assert done.returncode == 0, done.stderr
        bodies = request_bodies(mock)
    said = (done.stdout + done.stderr).decode().splitlines()
    lines = [line for line in said if "hooks (" in line]
    assert len(lines) == 1, said
    assert "troupe trust" in lines[0] and ".claude/settings.json" in lines[0]
    assert ".codex/hooks.json" in lines[0] and "PreToolUse" in lines[0]
    assert "Blocked by a PreToolUse hook" not in text_of(bodies[1])
    assert "codex-context" not in text_of(bodies[0])
    assert not (home.work / "tool-calls.log").exists()
    shown = (await home.troupe("config")).stdout.decode()
    assert "hook PreToolUse" in shown and "(ignored until trusted)" in shown
    assert (await home.troupe("trust")).returncode == 0
    listed = json.loads((await home.troupe("config", "--json")).stdout)["hooks"]
    assert {(h["event"], h["runs"]) for h in listed} == {
        ("PreToolUse", True), ("PostToolUse", True), ("UserPromptSubmit", True),
    }  # fmt: skip


async def test_the_users_own_hooks_always_run(home: Home) -> None:
    claude = home.root / "home" / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'from the users own hook'"}]}]}}))  # fmt: skip
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "hello")
        assert done.returncode == 0, done.stderr
        assert "from the users own hook" in text_of(request_bodies(mock)[0])
