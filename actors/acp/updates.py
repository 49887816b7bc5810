"""Session events as ACP ``session/update`` payloads (the published schema, v1)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.events import (
    AssistantReasoningDeltaEvent,
    AssistantTextDeltaEvent,
    AssistantTextEndEvent,
    EventData,
    ToolCallEndEvent,
    ToolCallStartEvent,
    UserInputEvent,
)

if TYPE_CHECKING:
    from actors.tools.tool import Tool


def tool_kind(data: ToolCallStartEvent) -> str:
    """ACP's tool kind of a call (read, edit, delete, move, search, execute, think,
    fetch, other): what its tool declares, carried by the event; for an event stored
    before events carried it, what Troupe's own tool of that name declares."""
    if data.tool_kind:
        return data.tool_kind
    tool = _builtin(data.tool_name)
    return tool.kind if tool is not None else "other"


def _builtin(name: str) -> Tool | None:
    """Troupe's own tool of that name, for an event stored before events carried
    what its tool declares. The tools are imported when first asked for: ``troupe
    acp`` answers ``initialize`` before any event (issue #36)."""
    from actors.tools.builtin import builtin_tool

    return builtin_tool(name)


def _plan_tool_name() -> str:
    """The plan tool's name, asked only for tool events (not for every delta)."""
    from actors.tools.core.plan import UPDATE_PLAN

    return UPDATE_PLAN.name


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def diff_of(data: ToolCallStartEvent, cwd: str) -> dict[str, Any] | None:
    """ACP diff content for a file-editing call, from the call's own arguments, as
    its tool declares them (:class:`~protocol.diff_fields.DiffFields`): carried by
    the event; for an event stored before it was, Troupe's own tool of that name."""
    arguments = data.arguments
    if isinstance(data.diff, msgspec.UnsetType):
        tool = _builtin(data.tool_name)
        fields = tool.diff if tool is not None else None
    else:
        fields = data.diff
    if fields is None or fields.patch is not None:  # ACP shows a diff of one file
        return None
    path = arguments.get(fields.path)
    new = arguments.get(fields.new)
    if not isinstance(path, str) or not isinstance(new, str):
        return None
    old = arguments.get(fields.old) if fields.old is not None else None
    if fields.old is not None and not isinstance(old, str):
        return None
    return {"type": "diff", "path": posixpath.join(cwd, path), "oldText": old, "newText": new}


def plan_of(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """ACP's ``plan`` update for an ``update_plan`` call (the whole list, as ACP
    wants it), or None when the arguments are not a plan (then it is shown as an
    ordinary tool call, which fails)."""
    from actors.tools.core.plan import UpdatePlanParams

    try:
        params = msgspec.convert(arguments, UpdatePlanParams)
    except msgspec.ValidationError:
        return None
    entries = [
        {"content": step.step, "priority": "medium", "status": step.status} for step in params.plan
    ]
    return {"sessionUpdate": "plan", "entries": entries}


def update_of(data: EventData, cwd: str, replay: bool = False) -> dict[str, Any] | None:
    """The ``update`` object for one event, or None for events ACP has no place for.
    ``replay`` (a loaded session's history): whole messages instead of deltas."""
    match data:
        case UserInputEvent() if replay:
            return {"sessionUpdate": "user_message_chunk", "content": _text(data.content)}
        case AssistantTextEndEvent() if replay and data.text:
            return {"sessionUpdate": "agent_message_chunk", "content": _text(data.text)}
        case AssistantTextDeltaEvent():
            return {"sessionUpdate": "agent_message_chunk", "content": _text(data.delta)}
        case AssistantReasoningDeltaEvent():
            return {"sessionUpdate": "agent_thought_chunk", "content": _text(data.delta)}
        case ToolCallStartEvent() if data.tool_name == _plan_tool_name() and (
            plan := plan_of(data.arguments)
        ):
            return plan
        case ToolCallEndEvent() if data.tool_name == _plan_tool_name() and not data.is_error:
            return None  # its start was the plan
        case ToolCallStartEvent():
            diff = diff_of(data, cwd)
            return {
                "sessionUpdate": "tool_call",
                "toolCallId": data.call_id,
                "title": data.tool_name,
                "kind": tool_kind(data),
                "status": "in_progress",
                "rawInput": data.arguments,
                "content": [diff] if diff else [],
            }
        case ToolCallEndEvent():
            return {
                "sessionUpdate": "tool_call_update",
                "toolCallId": data.call_id,
                "status": "failed" if data.is_error else "completed",
                "content": [{"type": "content", "content": _text(data.output)}],
            }
        case _:
            return None
