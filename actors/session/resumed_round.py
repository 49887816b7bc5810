"""A tool round cut short by a crash while it waited for an approval.

The approval request is durable, and so is the history up to the model turn that
asked for the tools (the store writes that turn before the request, see
:mod:`actors.server.store_sync`). After a restart the session carries on from
there instead of giving up: the request is open again under its old id, calls
that had finished keep their results, a call that was running when the server
died is reported as interrupted (it may have half-happened; running it twice
could do harm), and calls that had not started run as usual.
"""

from __future__ import annotations

import msgspec

from protocol.events import SessionEvent
from protocol.llm import ToolCall, ToolResult

CUT_SHORT = "[interrupted: the server stopped while this call was running]"


class ResumedRound(msgspec.Struct, frozen=True):
    """What a restarted session needs to finish the round."""

    calls: list[ToolCall]
    """The model turn's tool calls, in order."""
    request: SessionEvent
    """The open ``approval_request``, as stored (its seq and time kept)."""
    finished: dict[str, ToolResult] = {}
    """Results of the calls that ended, or were cut short, before the crash."""

    @property
    def request_id(self) -> str:
        value = getattr(self.request.data, "request_id", "")
        return value if isinstance(value, str) else ""

    @property
    def call_id(self) -> str:
        """The call the open request is about."""
        details = getattr(self.request.data, "details", {})
        value = details.get("call_id") if isinstance(details, dict) else None
        return value if isinstance(value, str) else ""

    def to_run(self) -> list[ToolCall]:
        return [call for call in self.calls if call.id not in self.finished]

    def merged(self, ran: list[ToolResult]) -> list[ToolResult]:
        """Every call's result, in call order."""
        by_id = {result.tool_call_id: result for result in ran} | self.finished
        return [by_id[call.id] for call in self.calls if call.id in by_id]
