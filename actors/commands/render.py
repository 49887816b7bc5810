"""How events look in a terminal: one renderer for ``run``, ``attach`` and ``demo``.

Iterations (one per model call) get a numbered rule, reasoning is dim, tool calls
cyan, their results green (red for errors), system messages (steering, warnings,
limits, approvals, subagents) yellow, and the assistant's own text bold. Colours
only when the output is a terminal (and ``NO_COLOR`` is unset). It renders the
typed event bodies of :mod:`protocol.events`, whether they came over the wire
(``Event.body()``) or from a session in this process; kinds it has no line for
(deltas, and kinds newer than this client) are skipped.

When several sessions share one terminal (the demo's parent and its subagents),
each line starts with the time since the start and whose event it is.
"""

from __future__ import annotations

import json
import os
import sys
import time
from types import MappingProxyType
from typing import Any, TextIO

from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantTextEndEvent,
    ErrorEvent,
    EventData,
    InputInterruptedEvent,
    InterruptedEvent,
    LoopDetectionEvent,
    SessionEndEvent,
    SteeringInjectedEvent,
    SubagentClosedEvent,
    SubagentCompletedEvent,
    SubagentFailedEvent,
    SubagentInputEvent,
    SubagentSpawnedEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    TurnLimitEvent,
    UserInputEvent,
    WarningEvent,
)

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
    """Prints events for people; keeps each session's iteration count.

    ``labelled``: prefix every line with the elapsed time and the session's label
    (for a terminal shared by a session and its subagents)."""

    def __init__(
        self, out: TextIO | None = None, colour: bool | None = None, labelled: bool = False
    ) -> None:
        self.out = out or sys.stdout
        if colour is None:
            colour = self.out.isatty() and not os.environ.get("NO_COLOR")
        self.colour = colour
        self.labelled = labelled
        self.started = time.monotonic()
        self.iterations: dict[str, int] = {}

    @property
    def iteration(self) -> int:
        """Model calls shown so far (of the unlabelled session)."""
        return self.iterations.get("", 0)

    def line(self, style: str, text: str, who: str = "") -> None:
        if self.colour:
            text = f"{STYLES[style]}{text}{RESET}"
        if self.labelled:
            text = f"{time.monotonic() - self.started:5.1f}s {who:<7} {text}"
        print(text, file=self.out, flush=True)

    def show(self, data: EventData | None, who: str = "") -> None:
        """One event's line(s); ``who`` labels the session when ``labelled``."""

        def system(text: str) -> None:
            self.line("system", text, who)

        match data:
            case AssistantTextEndEvent():  # one per model call, before its tool calls
                self._answer(data, who)
            case ToolCallStartEvent():
                self.line("tool", f"→ {data.tool_name}({_short(data.arguments)})", who)
            case ToolCallEndEvent():
                self._result(data, who)
            case UserInputEvent():
                system(f"> {data.content}")
            case SteeringInjectedEvent():
                system(f"[steering] {data.content}")
            case WarningEvent() | LoopDetectionEvent() | ErrorEvent() | InputInterruptedEvent():
                system(f"[{data.kind}] {data.message}".rstrip())
            case InterruptedEvent():
                system("[interrupted]")
            case SubagentSpawnedEvent():
                system(f"subagent spawned: {data.address}: {_short(data.task, 80)}")
            case SubagentCompletedEvent() | SubagentFailedEvent():
                verb = "completed" if isinstance(data, SubagentCompletedEvent) else "failed"
                system(f"subagent {verb}: {data.address}")
            case SubagentInputEvent() | SubagentClosedEvent():
                system(f"{data.kind.replace('_', ' ')}: {data.address}")
            case TurnLimitEvent():
                system(f"[turn limit] {data.limit}")
            case ApprovalRequestEvent():
                system(approval_prompt(data))
            case ApprovalResolvedEvent():
                verdict = "approved" if data.approved else "denied"
                system(f"[approval {verdict}] {data.message or ''}".rstrip())
            case SessionEndEvent():
                system(f"[session ended: {data.reason}]")
            case _:
                pass

    def _answer(self, data: AssistantTextEndEvent, who: str) -> None:
        count = self.iterations.get(who, 0) + 1
        self.iterations[who] = count
        self.line("iteration", f"── iteration {count} ──", who)
        if data.reasoning:
            self.line("reasoning", f"thinking: {data.reasoning.strip()}", who)
        if data.text:
            self.line("text", data.text.strip(), who)

    def _result(self, data: ToolCallEndEvent, who: str) -> None:
        lines = data.output.rstrip("\n").splitlines() or [""]
        if len(lines) > RESULT_LINES:
            hidden = len(lines) - RESULT_LINES
            lines = [*lines[: RESULT_LINES - 2], f"… {hidden} more lines …", *lines[-2:]]
        style = "failure" if data.is_error else "result"
        for number, text in enumerate(lines):
            self.line(style, ("  ← " if number == 0 else "    ") + text, who)

    def note(self, text: str) -> None:
        self.line("system", text)


def approval_prompt(data: ApprovalRequestEvent) -> str:
    """The question the seeds specify: ``Approve command: <command>? (yes/no)``."""
    return f"Approve {data.action}: {data.subject}? (yes/no)"
