"""After a crash: may the tool round that waited for an approval carry on?

It may when the stored story is whole: the input's last open request names its
tool call, and the stored history ends with the model turn that asked for that
call. Then the request stays open (no denial is recorded) and the session
resumes the round (:class:`~actors.session.resumed_round.ResumedRound`).
Otherwise recovery closes everything as an interruption, as before.
"""

from __future__ import annotations

import msgspec

from actors.session.resumed_round import CUT_SHORT, ResumedRound
from actors.store import Store
from actors.store.db import EventRow
from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    SessionEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    UnknownEventKind,
    decode_event_data,
)
from protocol.llm import ToolResult
from protocol.session import AssistantTurn


async def reopenable_round(store: Store, session_id: str, input_seq: int) -> ResumedRound | None:
    """The round to resume, if the input that began at ``input_seq`` stopped
    while a request of its last tool round was open."""
    rows = await _rows_after(store, session_id, input_seq)
    decoded = [(row, _decode(row)) for row in rows]
    resolved = {d.request_id for _, d in decoded if isinstance(d, ApprovalResolvedEvent)}
    open_requests = [
        (row, d) for row, d in decoded
        if isinstance(d, ApprovalRequestEvent) and d.request_id not in resolved
    ]  # fmt: skip
    if not open_requests:
        return None
    row, request = open_requests[-1]
    call_id = request.details.get("call_id")
    history = await store.history(session_id)
    if not isinstance(call_id, str) or not history:
        return None
    last = history[-1]
    if not isinstance(last, AssistantTurn) or call_id not in {c.id for c in last.tool_calls}:
        return None
    started = {d.call_id for _, d in decoded if isinstance(d, ToolCallStartEvent)}
    finished: dict[str, ToolResult] = {}
    for _, data in decoded:
        if isinstance(data, ToolCallEndEvent):
            finished[data.call_id] = ToolResult(
                data.call_id, data.output, data.is_error, data.tool_name
            )
    for call in last.tool_calls:
        if call.id in started and call.id not in finished and call.id != call_id:
            finished[call.id] = ToolResult(call.id, CUT_SHORT, True, call.name)
    event = SessionEvent(session_id, row.seq, row.timestamp, request)
    return ResumedRound(list(last.tool_calls), event, finished)


async def _rows_after(store: Store, session_id: str, after: int) -> list[EventRow]:
    rows: list[EventRow] = []
    while batch := await store.events_after(session_id, after):
        rows += batch
        after = batch[-1].seq
    return rows


def _decode(row: EventRow) -> object:
    try:
        return decode_event_data(row.kind, row.data)
    except (msgspec.DecodeError, UnknownEventKind):
        return None
