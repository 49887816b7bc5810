"""Assembling Gemini's streamed function-call arguments (``partialArgs``).

With argument streaming, a call arrives as ``{name, willContinue}``, then pieces
``{jsonPath: "$.a[0].b", stringValue|numberValue|boolValue|nullValue}`` (string
pieces at one path concatenate), and ends with an empty ``functionCall`` or a piece
without ``willContinue``. This module turns those pieces back into one object.
"""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]")


def path_steps(path: str) -> list[str | int]:
    """``$.operations[0].action`` -> ["operations", 0, "action"]."""
    steps: list[str | int] = []
    for match in _STEP.finditer(path[1:] if path.startswith("$") else path):
        name, index, quoted = match.groups()
        steps.append(int(index) if index is not None else (name if name is not None else quoted))
    return steps


def _value(piece: dict[str, Any]) -> tuple[bool, Any]:
    for field in ("stringValue", "numberValue", "boolValue"):
        if field in piece:
            return True, piece[field]
    if "nullValue" in piece:
        return True, None
    return False, None


class PartialArgs:
    """Arguments under construction for one streamed call."""

    def __init__(self) -> None:
        self.root: dict[str, Any] = {}

    def add(self, piece: dict[str, Any]) -> None:
        found, value = _value(piece)
        steps = path_steps(piece.get("jsonPath", ""))
        if not found or not steps:
            return
        node: Any = self.root
        for step, following in zip(steps, [*steps[1:], None], strict=True):
            if following is None:
                self._set(node, step, value)
                return
            node = self._child(node, step, [] if isinstance(following, int) else {})

    @staticmethod
    def _child(node: Any, step: str | int, empty: Any) -> Any:
        if isinstance(node, list) and isinstance(step, int):
            while len(node) <= step:
                node.append(None)
            if node[step] is None:
                node[step] = empty
            return node[step]
        if isinstance(node, dict):
            return node.setdefault(str(step), empty)
        return empty  # a path that contradicts what came before: drop the piece

    @staticmethod
    def _set(node: Any, step: str | int, value: Any) -> None:
        if isinstance(node, list) and isinstance(step, int):
            while len(node) <= step:
                node.append(None)
            previous = node[step]
            node[step] = (
                previous + value if isinstance(previous, str) and isinstance(value, str) else value
            )
        elif isinstance(node, dict):
            previous = node.get(str(step))
            if isinstance(previous, str) and isinstance(value, str):
                node[str(step)] = previous + value
            else:
                node[str(step)] = value
