"""Session events as ACP ``session/update`` payloads (the published schema, v1)."""

from __future__ import annotations

from typing import Any

from protocol.events import (
    AssistantReasoningDeltaEvent,
    AssistantTextDeltaEvent,
    EventData,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

_KINDS = {
    "read_file": "read",
    "read_many_files": "read",
    "list_dir": "read",
    "grep": "search",
    "glob": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "apply_patch": "edit",
    "shell": "execute",
}


def tool_kind(name: str) -> str:
    """ACP's tool kinds: read, edit, delete, move, search, execute, think, fetch, other."""
    return _KINDS.get(name, "other")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def update_of(data: EventData) -> dict[str, Any] | None:
    """The ``update`` object for one event, or None for events ACP has no place for."""
    match data:
        case AssistantTextDeltaEvent():
            return {"sessionUpdate": "agent_message_chunk", "content": _text(data.delta)}
        case AssistantReasoningDeltaEvent():
            return {"sessionUpdate": "agent_thought_chunk", "content": _text(data.delta)}
        case ToolCallStartEvent():
            return {
                "sessionUpdate": "tool_call",
                "toolCallId": data.call_id,
                "title": data.tool_name,
                "kind": tool_kind(data.tool_name),
                "status": "in_progress",
                "rawInput": data.arguments,
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
