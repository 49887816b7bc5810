"""How ``troupe run`` looks: at a colour terminal (a pseudo-terminal, TERM set,
no NO_COLOR) a spinner while the model thinks with its reasoning streaming dim,
parallel results labelled with their call, the answer rendered as Markdown and the
status in green or red; through a pipe, the same lines plain."""

from __future__ import annotations

import re
from typing import Any

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal

CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
REASONING = "Checking both files first, one shell each."
ANSWER = "# Report\n\n- **one** is fine\n- `two` is fine too\n"


def look_script() -> dict[str, Any]:
    shell = [
        {"name": "shell", "arguments": {"command": "echo one"}},
        {"name": "shell", "arguments": {"command": "echo two"}},
    ]
    return {
        "turns": [
            {"reasoning": REASONING, "tool_calls": shell, "delay": 0.5, "event_delay": 0.1},
            {"text": ANSWER, "delay": 0.5},
        ],
        "repeat": False,
        "delta_size": 8,
    }


def colour_env(home: Home) -> dict[str, str]:
    env = {k: v for k, v in home.env.items() if k != "NO_COLOR"}
    return {**env, "TERM": "xterm-256color"}


async def test_a_colour_terminal_gets_spinner_markdown_and_status(home: Home) -> None:
    async with mock_llm(look_script()) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "check the files")
        terminal = Terminal(argv, home.work, colour_env(home))
        try:
            with trio.fail_after(HANG_GUARD):
                await terminal.expect("✓ done")
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
    raw = terminal.screen
    text = CONTROL.sub("", raw)
    assert "\x1b[" in raw, "styled"
    assert "thinking 0." in text, "the working indicator"
    # Reasoning streams (dim) while the model thinks, before the answer is complete.
    assert "\x1b[2;3m  Checking" in raw
    assert text.index("Checking both") < text.index("── iteration 1 ──")
    # Parallel results name their call.
    assert "← shell(echo one): one" in text and "← shell(echo two): two" in text
    # The answer is rendered as Markdown: no markup characters left, a bullet for
    # each item.
    answer = text[text.index("── iteration 2 ──") : text.index("✓ done")]
    assert "**one**" not in answer and "# Report" not in answer and "`two`" not in answer
    assert "Report" in answer and "• one is fine" in answer and "• two is fine too" in answer
    assert "\x1b[1;32m✓ done" in raw, "success in green"
    assert "Traceback" not in text


async def test_a_failure_ends_in_red(home: Home) -> None:
    failing = {"turns": [{"fault": {"status": 400, "message": "bad model name"}}]}
    async with mock_llm(failing) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "fail please")
        terminal = Terminal(argv, home.work, colour_env(home))
        try:
            with trio.fail_after(HANG_GUARD):
                await terminal.expect("✗ error")
                assert await terminal.finish() == 1
        finally:
            await terminal.aclose()
    assert "\x1b[1;31m✗ error" in terminal.screen
    assert "bad model name" in CONTROL.sub("", terminal.screen)


async def test_a_pipe_gets_plain_lines(home: Home) -> None:
    async with mock_llm(look_script()) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "check the files")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "\x1b" not in out, "no escape codes in a pipe"
    assert "thinking 0." not in out, "no spinner"
    assert f"thinking: {REASONING}" in out
    assert "← shell(echo one): one" in out and "← shell(echo two): two" in out
    assert "- **one** is fine" in out, "Markdown left as written"
    assert out.splitlines()[-1].startswith("✓ done · 2 turns")


async def test_typing_at_a_colour_terminal_approve_steer_stop_ctrl_c(home: Home) -> None:
    """The spinner never hides the questions: an approval answered, a steer, "stop"
    and Ctrl-C, typed at a colour terminal while the model thinks or a tool runs."""
    (home.work / "build").mkdir()

    def shell(command: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}

    wait_for_go = "while [ ! -f go ]; do sleep 0.05; done; echo released"
    script = {
        "turns": [shell("rm -rf build"), shell(wait_for_go), shell("sleep 600"), {"text": "x"}],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "clean up")
        terminal = Terminal(argv, home.work, colour_env(home))
        try:
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect("Approve command: rm -rf build? (yes/no)")
                await terminal.type("yes\n")
                seen = await terminal.expect("[approval approved]", seen)
                seen = await terminal.expect(f"→ shell({wait_for_go})", seen)
                await terminal.type("use tabs\n")
                seen = await terminal.expect("[steering queued] use tabs", seen)
                (home.work / "go").write_text("")
                seen = await terminal.expect("[steering] use tabs", seen)
                seen = await terminal.expect("→ shell(sleep 600)", seen)
                await terminal.type("stop\n")
                seen = await terminal.expect("[stopping after the current step]", seen)
                await terminal.type("\x03")
                await terminal.expect("interrupted; session s-", seen)
                assert await terminal.finish() == 130
        finally:
            await terminal.aclose()
        bodies = request_bodies(mock)
    assert not (home.work / "build").exists(), "approved, so it ran"
    assert len(bodies) == 3 and "use tabs" in text_of(bodies[2])
    assert "thinking" in CONTROL.sub("", terminal.screen) and "Traceback" not in terminal.screen


async def test_the_demo_shows_subagents_in_words(home: Home) -> None:
    """``troupe demo`` through the same renderer: calls and subagent reports in
    words, not the JSON the model sent."""
    done = await home.troupe("demo", "--pace", "0")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "→ spawn_agent(Write fib.py and run it; keep its output in fib.out.)" in out
    assert "→ wait(agent_ids=a-1, a-2, a-3, timeout_ms=60000)" in out
    assert "→ write_file(file_path=fib.py, content=<5 lines>)" in out
    assert re.search(r"subagent completed: \S+/a-\d after 3 turns: fib\.py written and run", out)
    assert '{"' not in out, "no raw JSON"
    assert out.splitlines()[-1].startswith("done in ")


async def test_a_colour_terminal_shows_an_edit_as_a_coloured_diff(home: Home) -> None:
    """Every edit is a unified diff at the terminal: removed lines red, added green."""
    (home.work / "notes.txt").write_text("alpha\nkeep\n")
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+beta\n keep\n*** End Patch"
    script = {
        "turns": [
            {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": patch}}]},
            {"text": "Edited."},
        ],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        argv = home.argv("run", "--policy", "permissive", "--base-url", mock.base_url, "edit")
        terminal = Terminal(argv, home.work, colour_env(home))
        try:
            with trio.fail_after(HANG_GUARD):
                await terminal.expect("✓ done")
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
    raw = terminal.screen
    assert (home.work / "notes.txt").read_text() == "beta\nkeep\n"
    assert re.search(r"\x1b\[31m[^\n]*-alpha", raw), "the removed line in red"
    assert re.search(r"\x1b\[32m[^\n]*\+beta", raw), "the added line in green"
