"""Starting again after a crash: what a stored session needs before it resumes.

A server killed mid-input leaves a ``user_input`` without its ``processing_end``,
perhaps an approval request nobody answered, and a history whose last model turn
asked for tools whose results were never recorded. Recovery closes each of these
with durable events and turns, so clients and the model both see a consistent
story: the input was interrupted.
"""

from __future__ import annotations

import time

import msgspec

from actors.store import Store
from actors.store.db import SessionRow
from protocol.llm import ToolResult
from protocol.session import AssistantTurn, SessionEvent, SystemTurn, ToolResultsTurn, Turn

INTERRUPTED = "the server stopped while this input was running"
_BOUNDARY_KINDS = ("user_input", "processing_end", "session_end")


async def recover_session(store: Store, row: SessionRow, last_seq: int) -> tuple[int, bool]:
    """Close what a crash left open; returns the new last seq and whether an input
    was interrupted."""
    if row.state == "closed":
        return last_seq, False
    seq = last_seq
    marks = await store.events_of_kinds(
        row.id, *_BOUNDARY_KINDS, "approval_request", "approval_resolved"
    )

    def emit(kind: str, **data: object) -> None:
        nonlocal seq
        seq += 1
        store.append_event(SessionEvent(row.id, seq, time.time(), kind, data))  # type: ignore[arg-type]

    resolved = {_request_id(m.data) for m in marks if m.kind == "approval_resolved"}
    for mark in marks:
        if mark.kind == "approval_request":
            request_id = _request_id(mark.data)
            if request_id and request_id not in resolved:
                emit(
                    "approval_resolved", request_id=request_id, approved=False, message=INTERRUPTED
                )
    boundaries = [m for m in marks if m.kind in _BOUNDARY_KINDS]
    interrupted = bool(boundaries) and boundaries[-1].kind == "user_input"
    if boundaries and boundaries[-1].kind == "session_end":
        store.put_state(row.id, "closed")
        return seq, False
    if interrupted:
        emit("input_interrupted", message=INTERRUPTED)
        emit("processing_end", state="idle", interrupted=True)
    store.put_state(row.id, "idle", interrupted=interrupted or row.interrupted)
    await store.flush()
    return seq, interrupted


def _request_id(data: bytes) -> str | None:
    try:
        value = msgspec.json.decode(data).get("request_id")
    except (msgspec.DecodeError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def repair_history(history: list[Turn]) -> list[Turn]:
    """Turns to append so that every tool call has a result (providers insist)."""
    if not history or not isinstance(history[-1], AssistantTurn) or not history[-1].tool_calls:
        return []
    now = time.time()
    results = [
        ToolResult(call.id, f"[interrupted: {INTERRUPTED}]", True, call.name)
        for call in history[-1].tool_calls
    ]
    return [ToolResultsTurn(results, now), SystemTurn(f"Note: {INTERRUPTED}.", now)]
