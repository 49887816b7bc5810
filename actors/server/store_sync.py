"""Keeping the store up to date with the live sessions.

A hub sink (:meth:`StoreSync.observe`) queues every durable event for the store
and follows the session's state; a turn sink (:meth:`StoreSync.observe_turn`)
queues every history turn as the session appends it. Both go through the store's
one queue, in the order they happened, so whatever a crash leaves on disk is a
prefix of what the session did: its history up to its last stored turn, and
never an event about a turn the store lacks. A server going down needs no special
case: the runtime suspends its sessions (no ``session_end``), so what they emit is
simply recorded.
"""

from __future__ import annotations

from actors.server.records import Record, SubagentRecord
from actors.server.summaries import summary_of
from actors.store import Store
from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantTextEndEvent,
    AssistantTextStartEvent,
    LoopStateEvent,
    ProcessingEndEvent,
    SessionEndEvent,
    SessionEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    UserInputEvent,
)
from protocol.session import Turn

SEQ_BLOCK = 1024
"""Sequence numbers reserved per store write; the next block is reserved halfway
through this one, so the write is on disk long before the numbers are needed."""


class StoreSync:
    """Writes the sessions' events, states and history turns to the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def observe(self, record: Record, event: SessionEvent) -> None:
        """A hub sink: quick, never raises (it runs inside the session's emit).

        A session going to ``processing`` is written so before its input's event:
        the store then never holds a running input under an ``idle`` row, which is
        what lets a restart visit only the rows that are not at rest."""
        state = None
        match event.data:
            case UserInputEvent():
                state = "processing"
            case ProcessingEndEvent(state=ended, spend=spend):
                state = ended
                if spend is not None:
                    record.spend = spend
                    self.store.put_ledger(record.row.id, spend)
            case SessionEndEvent():
                state = "closed"
            case LoopStateEvent(state=doing):
                record.loop_state = doing
        changed = state if state is not None and state != record.state else None
        if changed == "processing":
            self._put_state(record, changed, event.timestamp)
        self._number_and_store(record, record.row.id, event)
        record.updated = max(record.updated, event.timestamp)
        if changed is not None and changed != "processing":
            self._put_state(record, changed, event.timestamp)
        if _follow_activity(record, event):
            self.store.put_summary(summary_of(record))

    def _put_state(self, record: Record, state: str, when: float) -> None:
        """Stored with the time of the event that changed it, which the live list
        shows: a time of its own (taken a moment later) made the list's "updated"
        differ before and after a restart."""
        record.state = state
        record.interrupted = False
        self.store.put_state(record.row.id, state, when=when)

    def observe_subagent(self, record: SubagentRecord, event: SessionEvent) -> None:
        """A subagent's hub sink: its events are stored under its own id."""
        self._number_and_store(record, record.id, event)

    def _number_and_store(
        self, record: Record | SubagentRecord, session_id: str, event: SessionEvent
    ) -> None:
        """Reserve the next block of seqs when half of this one is used; queue a
        durable event for the store."""
        if event.seq > record.seq_mark - SEQ_BLOCK // 2:
            record.seq_mark = event.seq + SEQ_BLOCK
            self.store.reserve_seqs(session_id, record.seq_mark)
        self.store.append_event(event)
        if event.seq > record.last_seq:
            record.last_seq = event.seq

    def observe_turn(self, record: Record, index: int, turn: Turn) -> None:
        """A turn sink: the turn the session just appended, queued for the store."""
        self.store.put_history(record.row.id, index, [turn])


def _follow_activity(record: Record, event: SessionEvent) -> bool:
    """The summary a session list shows: task, what it is doing, model calls, tokens.
    True when what is stored of it changed (the task, the counts)."""
    match event.data:
        case UserInputEvent(content=content):
            changed = not record.task
            record.task = record.task or content
            record.activity = "thinking"
            return changed
        case AssistantTextStartEvent() | ToolCallEndEvent() | ApprovalResolvedEvent():
            record.activity = "thinking"
        case ToolCallStartEvent():
            record.activity = "running_tool"
        case ApprovalRequestEvent():
            record.activity = "awaiting_approval"
        case AssistantTextEndEvent(usage=usage, cost_usd=cost):
            record.iterations += 1
            if record.cost_usd is not None and cost is not None:
                record.cost_usd += cost
            else:
                record.cost_usd = None  # one call without a price: the sum is unknown
            record.input_tokens += usage.input_tokens
            record.output_tokens += usage.output_tokens
            return True
        case ProcessingEndEvent() | SessionEndEvent():
            record.activity = ""
        case _:
            pass
    return False
