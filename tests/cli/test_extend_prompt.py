"""``troupe run`` at a terminal when an input stops at a limit: it asks whether to
extend the limit; yes (or a number) continues the same input, anything else ends
the run with the limit's exit code. A real pty; the mock says what the model saw."""

from __future__ import annotations

import pytest
import trio

from actors.commands.extend_prompt import extend_amount
from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal

STEPS = {
    "turns": [
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo step-1"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo step-2"}}]},
        {"text": "Finished all steps."},
    ],
    "repeat": False,
}
QUESTION = "[max_turns reached] extend it by 20 and continue? (yes, a number to add, or no)"


async def run_until_asked(home: Home, base_url: str) -> tuple[Terminal, int]:
    terminal = Terminal(
        home.argv("run", "--base-url", base_url, "--max-turns", "1", "three steps"),
        home.work,
        home.env,
    )
    return terminal, await terminal.expect(QUESTION)


async def test_yes_extends_the_limit_and_continues_the_same_input(home: Home) -> None:
    async with mock_llm(STEPS) as mock:
        terminal, seen = await run_until_asked(home, mock.base_url)
        try:
            with trio.fail_after(HANG_GUARD):
                assert len(request_bodies(mock)) == 1
                await terminal.type("yes\n")
                seen = await terminal.expect("[max_turns raised by 20; continuing]", seen)
                seen = await terminal.expect("Finished all steps.", seen)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        bodies = request_bodies(mock)
    assert len(bodies) == 3
    # The same input went on: no second user message reached the model.
    assert text_of(bodies[2]).count("three steps") == 1
    assert "Traceback" not in terminal.screen


async def test_no_ends_the_run_at_the_limit(home: Home) -> None:
    async with mock_llm(STEPS) as mock:
        terminal, _ = await run_until_asked(home, mock.base_url)
        try:
            with trio.fail_after(HANG_GUARD):
                await terminal.type("no\n")
                assert await terminal.finish() == 53
        finally:
            await terminal.aclose()
        assert len(request_bodies(mock)) == 1


@pytest.mark.parametrize(
    ("line", "limit", "amount"),
    [
        ("yes", "max_turns", 20),
        ("Y", "agentic_max_iterations", 20),
        ("yes", "input_token_budget", 50_000),
        ("5", "max_tool_rounds_per_input", 5),
        ("10,000", "session_token_budget", 10_000),
        ("no", "max_turns", None),
        ("", "max_turns", None),
        ("0", "max_turns", None),
        ("-3", "max_turns", None),
    ],
)
def test_the_answer_read(line: str, limit: str, amount: int | None) -> None:
    assert extend_amount(line, limit) == amount
