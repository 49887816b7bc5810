"""Tool calls and subagent reports in words, for the terminal renderer.

A person reading ``troupe run`` wants ``→ shell(ls *.py)`` and ``→ spawn_agent(Write
fib.py …)``, not the JSON the model sent: string arguments are shown as they are,
long file contents as a line count, lists joined with commas. Every string the
model sent is shown through :func:`~actors.commands.visible.visible`: a newline or
an escape sequence in a command shows as ``\\n`` or ``\\x1b``, never as a second
line or a redrawn screen. Only the formatting lives here, so the renderer stays a
small table of event kinds.
"""

from __future__ import annotations

import json
from typing import Any

from actors.commands.visible import visible

RESULT_LINES = 12
"""A tool result longer than this shows its head and tail."""

CONTENT_KEYS = frozenset({"content", "patch", "new_string", "old_string", "input"})
"""Arguments that carry a body of text: shown as their size, not their text."""


def short(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value(key: str, value: Any) -> str:
    if isinstance(value, str):
        if key in CONTENT_KEYS and ("\n" in value or len(value) > 60):
            lines = value.count("\n") + (0 if value.endswith("\n") else 1)
            return f"<{lines} line{'s' if lines != 1 else ''}>"
        return visible(value)
    if isinstance(value, list) and all(isinstance(item, str | int | float) for item in value):
        return ", ".join(str(item) for item in value)
    return visible(json.dumps(value, ensure_ascii=False))


def call_text(tool_name: str, arguments: dict[str, Any], limit: int = 160) -> str:
    """``name(arguments)`` in words: one argument shows its value alone, several
    show as ``key=value``."""
    if len(arguments) == 1:
        ((key, value),) = arguments.items()
        inner = _value(key, value)
    else:
        inner = ", ".join(f"{key}={_value(key, value)}" for key, value in arguments.items())
    return f"{tool_name}({short(inner, limit)})"


def result_lines(output: str) -> list[str]:
    """A tool's output, cut to its head and tail when long."""
    lines = output.rstrip("\n").splitlines() or [""]
    if len(lines) > RESULT_LINES:
        hidden = len(lines) - RESULT_LINES
        lines = [*lines[: RESULT_LINES - 2], f"… {hidden} more lines …", *lines[-2:]]
    return lines


def subagent_report(verb: str, address: str, output: str, turns_used: int) -> str:
    """``subagent completed: ADDRESS after N turns: first line of its answer``."""
    turns = f" after {turns_used} turn{'s' if turns_used != 1 else ''}" if turns_used else ""
    first = short(output, 100) if output.strip() else ""
    return f"subagent {verb}: {address}{turns}" + (f": {first}" if first else "")


def dollars(cost: float) -> str:
    """A cost in USD: four decimals, six for the fractions of a cent of small runs."""
    return f"${cost:.4f}" if cost >= 0.0001 or cost == 0 else f"${cost:.6f}"


__all__ = ["RESULT_LINES", "call_text", "dollars", "result_lines", "short", "subagent_report"]
