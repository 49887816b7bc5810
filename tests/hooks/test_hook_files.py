"""Reading the anchors' hook files and answers: pure functions, no processes."""

from __future__ import annotations

import json

import pytest

from actors.hooks.answer import HookAnswer, combine, read_answer
from actors.hooks.config import HookError, parse_hooks_text
from actors.hooks.names import anchor_name, matches, names_of
from actors.hooks.runner import INPUT_LIMIT, hook_input, wrapped

CODEX_TOML = """
model = "gpt-5"
[features]
hooks = true

[[hooks.PreToolUse]]
matcher = "^apply_patch$"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "python3 check_patch.py"
timeout = 5

[hooks.state]
"abc" = { enabled = true }
"""


def test_codex_config_toml_hooks_are_read_and_its_state_table_is_not_an_event() -> None:
    found, warnings = parse_hooks_text(CODEX_TOML, "/p/.codex/config.toml", user=False)
    assert warnings == []
    [hook] = found.hooks
    assert (hook.event, hook.matcher, hook.command, hook.timeout_s) == (
        "PreToolUse", "^apply_patch$", "python3 check_patch.py", 5
    )  # fmt: skip


def test_codex_features_hooks_false_turns_the_files_hooks_off() -> None:
    off = CODEX_TOML.replace("hooks = true", "hooks = false")
    assert parse_hooks_text(off, "/p/.codex/config.toml", user=True)[0].hooks == ()


def test_a_settings_file_keeps_what_it_can_and_says_what_it_skips() -> None:
    text = json.dumps({"model": "opus", "hooks": {
        "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "x"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "judge"},
                            {"type": "command", "command": "ok"}]}],
        "PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "y"}]}],
    }})  # fmt: skip
    found, warnings = parse_hooks_text(text, "settings.json", user=True)
    assert [(h.event, h.command) for h in found.hooks] == [("Stop", "ok")]
    assert len(warnings) == 3 and "PostToolUseFailure" in warnings[0]
    with pytest.raises(HookError, match=r"settings\.json"):
        parse_hooks_text("{not json", "settings.json", user=True)
    with pytest.raises(HookError):
        parse_hooks_text(json.dumps({"hooks": {"Stop": "nope"}}), "settings.json", user=True)


def test_matchers_use_the_anchors_names_and_troupes() -> None:
    assert anchor_name("shell") == "Bash" and anchor_name("my_tool") == "my_tool"
    assert matches("Bash", names_of("shell")) and matches("Bash", names_of("terminal"))
    assert matches("Edit|Write", names_of("apply_patch"))
    assert matches("^apply_patch$", names_of("apply_patch"))
    assert matches("mcp__github__.*", names_of("mcp__github__create_issue"))
    assert matches("read_file", names_of("read_file")) and matches("*", names_of("grep"))
    assert not matches("Bash", names_of("read_file")) and not matches("Bas", names_of("shell"))
    assert matches("startup", ("startup",)) and not matches("resume", ("startup",))


@pytest.mark.parametrize(
    ("exit_code", "stdout", "stderr", "expected"),
    [
        (2, "", "no rm\n", HookAnswer(decision="block", reason="no rm")),
        (1, "", "oops\nlast line\n", HookAnswer(error="exit code 1: last line")),
        (0, "plain context\n", "", HookAnswer(context="plain context")),
        (0, '{"decision": "approve", "reason": "fine"}', "",
         HookAnswer(decision="allow", reason="fine")),
        (0, '{"continue": false, "stopReason": "enough"}', "",
         HookAnswer(stop=True, stop_reason="enough")),
        (0, json.dumps({"hookSpecificOutput": {"permissionDecision": "ask",
         "permissionDecisionReason": "check", "updatedInput": {"command": "ls"},
         "additionalContext": "ctx"}}), "",
         HookAnswer(decision="ask", reason="check", updated_input={"command": "ls"},
                    context="ctx")),
        (0, json.dumps({"hookSpecificOutput": {"decision": {"behavior": "deny",
         "message": "no"}}}), "", HookAnswer(decision="deny", reason="no")),
        (0, '{"decision": 3, "hookSpecificOutput": [], "systemMessage": 5}', "", HookAnswer()),
        (0, "{broken json", "", HookAnswer(context="{broken json")),
    ],
)  # fmt: skip
def test_the_output_contract(
    exit_code: int, stdout: str, stderr: str, expected: HookAnswer
) -> None:
    assert read_answer(exit_code, stdout, stderr, timed_out=False) == expected


def test_a_timeout_is_a_non_blocking_error_and_the_strictest_decision_wins() -> None:
    assert read_answer(0, "", "", timed_out=True).error == "timed out"
    answers = [HookAnswer(decision="allow", updated_input={"a": 1}), HookAnswer(context="x"),
               HookAnswer(decision="deny", reason="no"), HookAnswer(decision="ask")]  # fmt: skip
    combined = combine(answers)
    assert (combined.decision, combined.reason, combined.context) == ("deny", "no", "x")
    assert combined.updated_input is None


def test_the_input_fits_a_command_line_and_cannot_end_the_here_document() -> None:
    payload = {"tool_input": {"content": "x" * 500_000, "command": "echo"}}
    text = hook_input(payload)
    assert len(text.encode()) <= INPUT_LIMIT and "cut by Troupe" in text
    assert json.loads(text)["tool_input"]["command"] == "echo"
    script = wrapped("cat", '{"a": "TROUPE_HOOK_INPUT_x\\n"}')
    delimiter = script.split("<<'", 1)[1].split("'", 1)[0]
    assert script.count(delimiter) == 2 and "\n" not in hook_input({"a": "b\nc"})
