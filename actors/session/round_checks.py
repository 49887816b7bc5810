"""What the loop checks after each tool round, besides loop detection: a
loop-breaking tool was called, the same call keeps failing, the input nears its
iteration limit (forge-agent-loop-prd FR5-FR7, agent-loop-and-tool-system S5.7).

Pure bookkeeping: :class:`RoundChecks` says what to tell the model and whether
to stop; the loop adds the messages to history and emits the events.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from actors.session.repeated_errors import (
    RepeatedErrors,
    change_approach_message,
    escalation_message,
)
from actors.tools.core.loop_breakers import AWAITS_ANSWER, LOOP_BREAKING_NAMES
from protocol.llm import ToolCall, ToolResult
from protocol.session import SessionConfig

ITERATION_LIMIT_MESSAGE = "Stopped: maximum iteration limit reached."


def limit_warning(rounds: int, limit: int) -> str:
    return (
        f"You have used {rounds} of {limit} tool rounds for this request. "
        "Wrap up: finish the most important part and report what is left."
    )


class Verdict(msgspec.Struct, frozen=True):
    """After a round: messages for the model (with their warning kind), and
    ``stop_text`` when the input ends here (``await_user``: waiting for an answer)."""

    notes: list[tuple[str, str]] = msgspec.field(default_factory=list)
    stop_text: str | None = None
    await_user: bool = False


class RoundChecks:
    """The per-input state of the checks; :meth:`reset` at each new input."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self._errors = RepeatedErrors(
            config.repeated_error_warn_after, config.repeated_error_escalate_after
        )
        self._limit_warned = False

    @classmethod
    def for_input(cls, config: SessionConfig) -> RoundChecks:
        """Fresh checks for a new input, with the settings in force now."""
        return cls(config)

    def after_round(
        self, rounds: int, calls: Sequence[ToolCall], results: Sequence[ToolResult]
    ) -> Verdict:
        for call, result in zip(calls, results, strict=False):
            if call.name in LOOP_BREAKING_NAMES and not result.is_error:
                content = result.content
                text = content if isinstance(content, str) else str(content)
                return Verdict(stop_text=text, await_user=call.name in AWAITS_ANSWER)
        notes: list[tuple[str, str]] = []
        if self.config.repeated_error_warn_after or self.config.repeated_error_escalate_after:
            for call, result in zip(calls, results, strict=False):
                verdict = self._errors.record(call.name, call.arguments, result.is_error)
                count = self._errors.count(call.name, call.arguments)
                if verdict == "escalate":
                    return Verdict(stop_text=escalation_message(call.name, count), await_user=True)
                if verdict == "warn":
                    notes.append((change_approach_message(call.name, count), "repeated_error"))
        limit, ratio = self.config.max_tool_rounds_per_input, self.config.iteration_warning_ratio
        if limit and ratio and not self._limit_warned and rounds >= math.ceil(limit * ratio):
            self._limit_warned = True
            notes.append((limit_warning(rounds, limit), "iteration_limit_near"))
        return Verdict(notes=notes)
