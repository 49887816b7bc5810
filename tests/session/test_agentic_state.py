"""The agentic state block and the repeated-error tracker."""

from __future__ import annotations

from actors.session.agentic_state import AgenticState, state_block
from actors.session.repeated_errors import RepeatedErrors


def test_state_block_content() -> None:
    state = AgenticState("make the tests pass", "Fix test_parse", max_iterations=25)
    block = state_block(state)
    assert block.startswith("<agentic_state>") and block.endswith("</agentic_state>")
    assert "Original prompt: make the tests pass" in block
    assert "Objective: Fix test_parse" in block
    assert "Iteration: 1 of 25" in block
    assert "Last command" not in block
    assert "Files modified this session: none" in block


def test_state_follows_commands_and_writes() -> None:
    state = AgenticState("p", "o", max_iterations=3).next_iteration()
    state = state.after_command("pytest -q", "x" * 2000 + "END", 1, "/repo")
    state = state.after_write("src/a.py").after_write("src/a.py").after_write("b.py")
    block = state_block(state)
    assert "Iteration: 2 of 3" in block
    assert "Last command: pytest -q" in block and "Exit code: 1" in block
    assert "Working directory: /repo" in block
    assert "Files modified this session: src/a.py, b.py" in block
    output = block.split("Last output (end):\n", 1)[1].split("\n", 1)[0]
    assert output.endswith("END") and len(output) <= 505


def test_repeated_errors_warn_then_escalate() -> None:
    tracker = RepeatedErrors(warn_after=2, escalate_after=3)
    call = ("shell", {"command": "make"})
    assert tracker.record(*call, is_error=True) == "ok"
    assert tracker.record(*call, is_error=True) == "warn"
    assert tracker.record("shell", {"command": "make -j2"}, is_error=True) == "ok"
    assert tracker.record(*call, is_error=True) == "escalate"
    assert tracker.record(*call, is_error=False) == "ok"
    assert tracker.count(*call) == 0
