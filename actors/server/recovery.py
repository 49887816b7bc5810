"""Starting again after a crash: what a stored session needs before it resumes.

A server killed mid-input leaves a ``user_input`` without its ``processing_end``,
perhaps an approval request nobody answered, and a history whose last model turn
asked for tools whose results were never recorded. Recovery closes each of these
with durable events and turns, so clients and the model both see a consistent
story: the input was interrupted.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import msgspec

from actors.server.reopen import reopenable_round
from actors.session.resumed_round import ResumedRound
from actors.store import Store
from actors.store.db import EventRow, SessionRow
from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    EventData,
    InputInterruptedEvent,
    ProcessingEndEvent,
    SessionEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    UnknownEventKind,
    decode_event_data,
)
from protocol.llm import ToolResult
from protocol.session import AssistantTurn, SystemTurn, ToolResultsTurn, Turn

INTERRUPTED = "the server stopped while this input was running"
INTERRUPTED_RESULT = f"[not finished: {INTERRUPTED}]"
"""A tool call's result when the server stopped before it ended."""
_BOUNDARY_KINDS = ("user_input", "processing_end", "session_end")


class Recovered(NamedTuple):
    last_seq: int
    interrupted: bool
    resumed: ResumedRound | None = None
    """The tool round to carry on: its approval request stays open."""


async def recover_session(store: Store, row: SessionRow, last_seq: int) -> tuple[int, bool]:
    """Close what a crash left open; returns the new last seq and whether an input
    was interrupted."""
    recovered = await recover_stored_session(store, row, last_seq)
    return recovered.last_seq, recovered.interrupted


async def recover_stored_session(store: Store, row: SessionRow, last_seq: int) -> Recovered:
    """Close what a crash left open, except a tool round waiting for an approval
    whose story is whole (:func:`actors.server.reopen.reopenable_round`)."""
    if row.state == "closed":
        return Recovered(last_seq, False)
    closed = await close_open_input(store, row.id, last_seq, reopen=True)
    if closed.ended:
        if row.state != "closed":
            store.put_state(row.id, "closed")
        return Recovered(closed.seq, False)
    if closed.resumed is not None:
        if row.state != "processing":
            store.put_state(row.id, "processing")
        await store.flush()
        return Recovered(closed.seq, False, closed.resumed)
    interrupted = closed.interrupted or row.interrupted
    # A session that needs nothing is not written: its "updated" stays its own.
    if row.state != "idle" or interrupted != row.interrupted or closed.seq != last_seq:
        store.put_state(row.id, "idle", interrupted=interrupted)
        await store.flush()
    return Recovered(closed.seq, closed.interrupted)


class ClosedInput(NamedTuple):
    seq: int
    """The new last seq."""
    interrupted: bool
    ended: bool
    """The session had ended: nothing was added but the approvals' answers."""
    resumed: ResumedRound | None = None


async def close_open_input(
    store: Store, session_id: str, last_seq: int, *, reopen: bool = False
) -> ClosedInput:
    """Answer the approvals a crash left unanswered and interrupt an input it left
    running, with events numbered after ``last_seq`` (the highest seq issued).
    With ``reopen``, a tool round waiting for an approval whose story is whole is
    left open instead, to be resumed (sessions do this; subagents are not restarted)."""
    seq = last_seq
    marks = await store.events_of_kinds(
        session_id, *_BOUNDARY_KINDS, "approval_request", "approval_resolved"
    )

    def emit(data: EventData) -> None:
        nonlocal seq
        seq += 1
        store.append_event(SessionEvent(session_id, seq, time.time(), data))

    boundaries = [m for m in marks if m.kind in _BOUNDARY_KINDS]
    interrupted = bool(boundaries) and boundaries[-1].kind == "user_input"
    resumed = None
    if reopen and interrupted:
        resumed = await reopenable_round(store, session_id, boundaries[-1].seq)
    keep_open = resumed.request_id if resumed else None
    resolved = {_request_id(m) for m in marks if m.kind == "approval_resolved"}
    for mark in marks:
        if mark.kind == "approval_request":
            request_id = _request_id(mark)
            if request_id and request_id not in resolved and request_id != keep_open:
                emit(ApprovalResolvedEvent(request_id, approved=False, message=INTERRUPTED))
    if boundaries and boundaries[-1].kind == "session_end":
        return ClosedInput(seq, False, True)
    if resumed is not None:
        return ClosedInput(seq, False, False, resumed)
    if interrupted:
        for call in await _open_calls(store, session_id, boundaries[-1].seq):
            emit(ToolCallEndEvent(call.call_id, call.tool_name, INTERRUPTED_RESULT, True))
        emit(InputInterruptedEvent(INTERRUPTED))
        emit(ProcessingEndEvent("idle", interrupted=True))
    return ClosedInput(seq, interrupted, False)


async def _open_calls(store: Store, session_id: str, after_seq: int) -> list[ToolCallStartEvent]:
    """The tool calls an interrupted input started and never ended, in order: each
    is ended on recovery as the history's repair ends it for the model, so a client
    never shows a call as running for good."""
    started: dict[str, ToolCallStartEvent] = {}
    while rows := await store.events_after(session_id, after_seq):
        for row in rows:
            if row.kind not in ("tool_call_start", "tool_call_end"):
                continue
            try:
                data = decode_event_data(row.kind, row.data)
            except (msgspec.DecodeError, UnknownEventKind):
                continue
            if isinstance(data, ToolCallStartEvent):
                started[data.call_id] = data
            elif isinstance(data, ToolCallEndEvent):
                started.pop(data.call_id, None)
        after_seq = rows[-1].seq
    return list(started.values())


def _request_id(row: EventRow) -> str | None:
    """The approval a stored request or answer is about (None if it cannot be read)."""
    try:
        data = decode_event_data(row.kind, row.data)
    except (msgspec.DecodeError, UnknownEventKind):
        return None
    if isinstance(data, ApprovalRequestEvent | ApprovalResolvedEvent):
        return data.request_id
    return None


def repair_history(history: list[Turn]) -> list[Turn]:
    """Turns to append so that every tool call has a result (providers insist)."""
    if not history or not isinstance(history[-1], AssistantTurn) or not history[-1].tool_calls:
        return []
    now = time.time()
    results = [
        ToolResult(call.id, INTERRUPTED_RESULT, True, call.name) for call in history[-1].tool_calls
    ]
    return [ToolResultsTurn(results, now), SystemTurn(f"Note: {INTERRUPTED}.", now)]
