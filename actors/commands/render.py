"""How events look in a terminal: each kind of thing in its own style.

Iterations (one per model call) get a numbered rule, reasoning is dim, tool calls
cyan, their results green (red for errors), system messages (steering, warnings,
limits, approvals) yellow, and the assistant's own text plain. Colours only when
the output is a terminal (and ``NO_COLOR`` is unset).
"""

from __future__ import annotations

import json
import os
import sys
from types import MappingProxyType
from typing import Any, TextIO

from protocol.wire import Event

RESULT_LINES = 12

STYLES = MappingProxyType(
    {
        "iteration": "\x1b[1;35m",
        "reasoning": "\x1b[2;3m",
        "tool": "\x1b[36m",
        "result": "\x1b[32m",
        "failure": "\x1b[31m",
        "system": "\x1b[33m",
        "text": "\x1b[1m",
    }
)
RESET = "\x1b[0m"


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TextRenderer:
    """Prints events for people; keeps the iteration count."""

    def __init__(self, out: TextIO | None = None, colour: bool | None = None) -> None:
        self.out = out or sys.stdout
        if colour is None:
            colour = self.out.isatty() and not os.environ.get("NO_COLOR")
        self.colour = colour
        self.iteration = 0

    def line(self, style: str, text: str) -> None:
        if self.colour:
            text = f"{STYLES[style]}{text}{RESET}"
        print(text, file=self.out, flush=True)

    def show(self, event: Event) -> None:
        data = event.data
        kind = event.kind
        if kind == "assistant_text_end":  # one per model call, before its tool calls
            self.iteration += 1
            self.line("iteration", f"── iteration {self.iteration} ──")
            if data.get("reasoning"):
                self.line("reasoning", f"thinking: {data['reasoning'].strip()}")
            if data.get("text"):
                self.line("text", data["text"].strip())
        elif kind == "tool_call_start":
            self.line("tool", f"→ {data.get('tool_name')}({_short(data.get('arguments', {}))})")
        elif kind == "tool_call_end":
            self._result(data)
        elif kind == "user_input":
            self.line("system", f"> {data.get('content', '')}")
        elif kind in ("steering_injected",):
            self.line("system", f"[steering] {data.get('content', '')}")
        elif kind in ("warning", "loop_detection", "error", "input_interrupted", "interrupted"):
            self.line("system", f"[{kind}] {data.get('message', '')}".rstrip())
        elif kind.startswith("subagent_"):
            self.line("system", f"[{kind}] {_short(data)}")
        elif kind == "turn_limit":
            self.line("system", f"[turn limit] {data.get('limit')}")
        elif kind == "approval_request":
            self.line("system", approval_prompt(data))
        elif kind == "approval_resolved":
            verdict = "approved" if data.get("approved") else "denied"
            self.line("system", f"[approval {verdict}] {data.get('message') or ''}".rstrip())
        elif kind == "session_end":
            self.line("system", f"[session ended: {data.get('reason')}]")

    def _result(self, data: dict[str, Any]) -> None:
        output = str(data.get("output", "")).rstrip("\n")
        lines = output.splitlines() or [""]
        if len(lines) > RESULT_LINES:
            hidden = len(lines) - RESULT_LINES
            lines = [*lines[: RESULT_LINES - 2], f"… {hidden} more lines …", *lines[-2:]]
        style = "failure" if data.get("is_error") else "result"
        for number, text in enumerate(lines):
            self.line(style, ("  ← " if number == 0 else "    ") + text)

    def note(self, text: str) -> None:
        self.line("system", text)


def approval_prompt(data: dict[str, Any]) -> str:
    """The question the seeds specify: ``Approve command: <command>? (yes/no)``."""
    action = str(data.get("action", "command"))
    return f"Approve {action}: {data.get('subject', '')}? (yes/no)"
