"""Text from the model or a tool cannot drive the terminal: control characters,
escape sequences and bidi overrides are shown as escapes, in the approval prompt
above all (issue 30: ``rm -rf ~/p\\r\\x1b[2KApprove command: ls`` read as ``ls``)."""

from __future__ import annotations

import io
from typing import Any

import pytest
import trio

from actors.commands.interact import UnofferedAnswer, approval_answer
from actors.commands.render import TextRenderer, approval_prompt
from actors.commands.render_calls import call_text
from actors.commands.visible import has_hidden, visible
from protocol.events import ApprovalRequestEvent, ToolCallEndEvent, ToolCallStartEvent
from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, shell_then_text
from tests.cli.terminal import Terminal
from tests.cli.test_first_hour import run_detached

HOSTILE = "rm -rf ~/p\r\x1b[2KApprove command: ls"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ls -la", "ls -la"),
        ("a\rb", "a\\rb"),
        ("a\nb\tc", "a\\nb\\tc"),
        ("\x1b[2K", "\\x1b[2K"),
        ("\x07bell\x00nul\x7f", "\\x07bell\\x00nul\\x7f"),
        ("c1 \x9b31m", "c1 \\x9b31m"),  # the one-byte CSI
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),  # right-to-left override
        ("zero\u200bwidth\u2066iso\u2069", "zero\\u200bwidth\\u2066iso\\u2069"),
        ("line\u2028sep", "line\\u2028sep"),
        ("naïve café 日本 ✓", "naïve café 日本 ✓"),
    ],
)
def test_visible_writes_controls_as_escapes(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert has_hidden(raw) == (raw != shown)


def test_visible_keeps_what_it_is_told_to() -> None:
    assert visible("one\ntwo\x1b[31m", keep="\n") == "one\ntwo\\x1b[31m"


def test_the_approval_prompt_shows_the_escapes_the_policy_and_the_answers() -> None:
    details: dict[str, Any] = {
        "tool": "shell", "call_id": "c1", "category": "admin",
        "reason": "rm -rf \x1b[8mhidden",
    }  # fmt: skip
    prompt = approval_prompt(ApprovalRequestEvent("r1", "command", HOSTILE, details))
    first = prompt.splitlines()[0]
    assert first == "Approve command: rm -rf ~/p\\r\\x1b[2KApprove command: ls? (yes/no)"
    assert "control characters or escape sequences" in prompt
    assert "policy: admin · rm -rf \\x1b[8mhidden" in prompt
    assert "yes / always (this exact command) / no / or type a reason to say no" in prompt
    assert "\r" not in prompt and "\x1b" not in prompt


def test_answers_the_request_offers_are_shown_as_it_names_them() -> None:
    details = {
        "category": "admin",
        "reason": "needs approval",
        "answers": ["yes", {"answer": "prefix", "rule": "commands starting with `npm test`"}],
        "rule_note": "a new detail",
    }
    prompt = approval_prompt(ApprovalRequestEvent("r1", "command", "npm test -x", details))
    assert "answer: yes / prefix (commands starting with `npm test`) / or type a reason" in prompt
    assert "rule_note: a new detail" in prompt


def test_tool_lines_and_results_are_escaped() -> None:
    assert call_text("shell", {"command": HOSTILE}) == (
        "shell(rm -rf ~/p\\r\\x1b[2KApprove command: ls)"
    )
    out = io.StringIO()
    renderer = TextRenderer(out, colour=False)
    renderer.show(ToolCallStartEvent("c1", "shell", {"command": "echo\u202e hi"}))
    renderer.show(ToolCallEndEvent("c1", "shell", "done\x1b]0;title\x07\nnext\ttab"))
    printed = out.getvalue()
    assert "\x1b" not in printed and "\u202e" not in printed and "\x07" not in printed
    assert "echo\\u202e hi" in printed
    assert "done\\x1b]0;title\\x07" in printed and "next\ttab" in printed


async def test_the_hostile_approval_prompt_at_a_terminal(home: Home) -> None:
    """The reproduction: the command tries to erase its own line and show ``ls``;
    the terminal shows every escape, and no raw one reaches the screen."""
    async with mock_llm(shell_then_text(HOSTILE)) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "clean up")
        terminal = Terminal(argv, home.work, home.env)
        try:
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect(
                    "Approve command: rm -rf ~/p\\r\\x1b[2KApprove command: ls? (yes/no)"
                )
                await terminal.expect("shown escaped", seen)
                await terminal.type("no\n")
                await terminal.expect("All done.", seen)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        assert len(request_bodies(mock)) == 2
    assert "\x1b[2K" not in terminal.screen and "~/p\r" not in terminal.screen
    assert "→ shell(rm -rf ~/p\\r\\x1b[2KApprove command: ls)" in terminal.screen


async def test_run_shows_each_edit_as_a_diff_collapsed_unless_verbose(home: Home) -> None:
    content = "".join(f"line {n}\n" for n in range(1, 61))
    write = {"name": "write_file", "arguments": {"file_path": "long.txt", "content": content}}
    turns = [{"tool_calls": [write]}, {"text": "Written."}]
    script = {"turns": turns * 2, "repeat": False}  # one run each
    async with mock_llm(script) as mock:
        short = await home.troupe("run", "--base-url", mock.base_url, "write it")
        full = await home.troupe("run", "--verbose", "--base-url", mock.base_url, "again")
    assert short.returncode == 0 and full.returncode == 0, short.stderr + full.stderr
    collapsed = short.stdout.decode()
    assert "+++ long.txt (written, 60 lines)" in collapsed
    assert "    +line 39" in collapsed and "+line 40\n" not in collapsed
    assert "… 21 more diff lines (--verbose shows all)" in collapsed
    assert "    +line 60" in full.stdout.decode() and "more diff lines" not in full.stdout.decode()


def test_a_typed_answer_is_taken_as_the_request_offers_it() -> None:
    offered = {"answers": [{"answer": "prefix", "scope": "session", "rule": "npm test *"}]}
    assert approval_answer("prefix", offered) == {"approved": True, "scope": "session"}
    assert approval_answer("always", offered) == {"approved": True, "scope": "command"}
    assert approval_answer("yes") == {"approved": True}
    assert approval_answer("not that one") == {"approved": False, "message": "not that one"}


WIDER = {
    "category": "write",
    "always": "exactly `npm test -x` in /w",
    "rule": "commands starting with `npm test` in /w",
}
ADMIN_LINE = {"category": "admin", "always": "exactly `sudo ls` in /w", "rule": None}


def test_always_and_rule_are_named_by_what_they_allow() -> None:
    """Issue 30: "always" is exactly this call, "rule" the wider rule, shown as the
    request words them; no rule is offered where the request names none."""
    prompt = approval_prompt(ApprovalRequestEvent("r1", "command", "npm test -x", WIDER))
    assert prompt.splitlines()[-1] == (
        "  answer: yes / always (exactly `npm test -x` in /w)"
        " / rule (commands starting with `npm test` in /w) / no / or type a reason to say no"
    )
    assert "  always:" not in prompt and "  rule:" not in prompt, "not listed twice"
    admin = approval_prompt(ApprovalRequestEvent("r2", "command", "sudo ls", ADMIN_LINE))
    assert admin.splitlines()[-1] == (
        "  answer: yes / always (exactly `sudo ls` in /w) / no / or type a reason to say no"
    )
    hostile = {"always": f"exactly `{HOSTILE}`", "rule": "starting with `\x1b[8m`"}
    shown = approval_prompt(ApprovalRequestEvent("r3", "command", HOSTILE, hostile))
    assert "\x1b" not in shown and "\r" not in shown
    assert "rule (starting with `\\x1b[8m`)" in shown


def test_rule_is_answered_only_where_one_is_offered() -> None:
    for word in ("rule", "r", " Rule "):
        assert approval_answer(word, WIDER) == {"approved": True, "scope": "rule"}
    assert approval_answer("always", WIDER) == {"approved": True, "scope": "command"}
    assert approval_answer("a", ADMIN_LINE) == {"approved": True, "scope": "command"}
    for details in (ADMIN_LINE, {}, None):
        with pytest.raises(UnofferedAnswer, match="no wider rule is offered"):
            approval_answer("rule", details)
        with pytest.raises(UnofferedAnswer):
            approval_answer("r", details)


async def test_the_headless_denial_notice_shows_the_command_escaped(home: Home) -> None:
    """``troupe run`` with nobody to ask says on stderr which call it denied: the
    model's command is shown escaped there too, one line, no raw escape."""
    async with mock_llm(shell_then_text(HOSTILE)) as mock:
        done = await run_detached(home, "run", "--base-url", mock.base_url, "clean up")
        assert len(request_bodies(mock)) == 2
    assert done.returncode == 0, done.stderr
    said = done.stderr.decode()
    assert "\x1b" not in said and "\r" not in said, said
    (notice,) = [line for line in said.splitlines() if "nobody to ask" in line]
    assert "denied rm -rf ~/p\\r\\x1b[2KApprove command: ls: nobody to ask" in notice
