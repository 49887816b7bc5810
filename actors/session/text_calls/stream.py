"""Early detection (forge-agent-loop-prd R3.5): knowing, while the answer is still
streaming, that a complete tool call has arrived, so generation can stop there
instead of paying for a made-up ``Observation:`` and everything after it.
"""

from __future__ import annotations

import re

from actors.session.text_calls.objects import object_end

_CLOSERS = re.compile(r"</(tool_call|function_call|tool_use|function|invoke)>")
_ACTION_INPUT = re.compile(r"^[ \t]*Action[ \t]+Input[ \t]*:[ \t]*", re.MULTILINE)
_AFTER_INPUT = re.compile(r"^[ \t]*(Observation|Thought|Action)[ \t]*:", re.MULTILINE)


class CallWatch:
    """Fed the streamed text piece by piece; says when a whole call is in.

    Work per piece is bounded by the new text plus the call being read, not by the
    whole answer, so a long answer costs linear time.
    """

    def __init__(self, tool_names: tuple[str, ...] = ()) -> None:
        self.text = ""
        self.complete = False
        self._checked = 0
        names = "|".join(re.escape(name) for name in tool_names)
        self._named = re.compile(rf"</({names})>") if names else None

    def feed(self, piece: str) -> bool:
        """Add ``piece``; True once a complete call has arrived."""
        if self.complete:
            return True
        self.text += piece
        window_start = max(0, self._checked - 32)
        window = self.text[window_start:]
        if _CLOSERS.search(window) or (self._named is not None and self._named.search(window)):
            self.complete = True
        elif (match := _last_action_input(self.text)) is not None:
            self.complete = _react_complete(self.text, match.end())
        self._checked = len(self.text)
        return self.complete


def _last_action_input(text: str) -> re.Match[str] | None:
    last = None
    for last in _ACTION_INPUT.finditer(text):  # noqa: B007 - the last one is wanted
        pass
    return last


def _react_complete(text: str, start: int) -> bool:
    rest = text[start:].lstrip()
    if rest.startswith("```"):
        rest = rest.partition("\n")[2].lstrip()
    if rest.startswith("{"):
        return object_end(rest, 0) is not None
    return _AFTER_INPUT.search(text, start) is not None
