"""Repeated failing tool calls (forge-agent-loop-prd FR7, R7.4-R7.5).

The same call (tool and arguments) failing again and again is a loop the model
does not see. After ``warn_after`` identical failures the model is told to change
approach; after ``escalate_after`` the session stops and asks the user, rather
than burning iterations. A success of the same call clears its count.
"""

from __future__ import annotations

import json
from typing import Any, Literal

Verdict = Literal["ok", "warn", "escalate"]


class RepeatedErrors:
    """Counts identical failing calls within one input."""

    def __init__(self, warn_after: int = 3, escalate_after: int = 5) -> None:
        self.warn_after = warn_after
        self.escalate_after = escalate_after
        self._failures: dict[str, int] = {}

    @staticmethod
    def signature(name: str, arguments: dict[str, Any]) -> str:
        return name + json.dumps(arguments, sort_keys=True, default=str)

    def record(self, name: str, arguments: dict[str, Any], is_error: bool) -> Verdict:
        key = self.signature(name, arguments)
        if not is_error:
            self._failures.pop(key, None)
            return "ok"
        count = self._failures.get(key, 0) + 1
        self._failures[key] = count
        if self.escalate_after and count >= self.escalate_after:
            return "escalate"
        if self.warn_after and count >= self.warn_after:
            return "warn"
        return "ok"

    def count(self, name: str, arguments: dict[str, Any]) -> int:
        return self._failures.get(self.signature(name, arguments), 0)

    def reset(self) -> None:
        self._failures.clear()


def change_approach_message(name: str, count: int) -> str:
    return (
        f"The same {name} call has failed {count} times with the same arguments. "
        "Do not repeat it: change your approach, or explain what is blocking you."
    )


def escalation_message(name: str, count: int) -> str:
    return (
        f"Stopped: the same {name} call failed {count} times. "
        "Waiting for your guidance before trying again."
    )
