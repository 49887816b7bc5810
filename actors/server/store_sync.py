"""Keeping the store up to date with the live sessions.

A hub sink (:meth:`StoreSync.observe`) queues every durable event for the store
and follows the session's state; when events say the history grew, a task per
session (:meth:`StoreSync.save_history`) asks the session for a snapshot and
stores the new turns. A server going down needs no special case: the runtime
suspends its sessions (no ``session_end``), so what they emit is simply recorded.
"""

from __future__ import annotations

import trio

from actors.kernel import ActorError, ActorRef
from actors.server.records import Record
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
from protocol.session import GetSnapshot, Turn

_HISTORY_KINDS = frozenset(
    {"user_input", "assistant_text_start", "assistant_text_end", "steering_injected",
     "loop_detection", "processing_end", "session_end", "turn_limit"}
)  # fmt: skip
"""Events after which the session's history may have grown."""
SEQ_BLOCK = 1024
"""Sequence numbers reserved per store write; the next block is reserved halfway
through this one, so the write is on disk long before the numbers are needed."""


class StoreSync:
    """Writes the sessions' events, states and history turns to the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def observe(self, record: Record, event: SessionEvent) -> None:
        """A hub sink: quick, never raises (it runs inside the session's emit)."""
        if event.seq > record.seq_mark - SEQ_BLOCK // 2:
            record.seq_mark = event.seq + SEQ_BLOCK
            self.store.reserve_seqs(record.row.id, record.seq_mark)
        if isinstance(event.data, ApprovalRequestEvent) and record.actor is not None:
            # The turn that asked for the tool goes to disk before the request,
            # so a restart can carry the round on (actors/server/reopen.py).
            self.store_turns(record, record.actor.loop.history)
        self.store.append_event(event)
        if event.seq > record.last_seq:
            record.last_seq = event.seq
        state = None
        match event.data:
            case UserInputEvent():
                state = "processing"
            case ProcessingEndEvent(state=ended):
                state = ended
            case SessionEndEvent():
                state = "closed"
            case LoopStateEvent(state=doing):
                record.loop_state = doing
        if state is not None and state != record.state:
            record.state = state
            record.interrupted = False
            self.store.put_state(record.row.id, state)
        if event.kind in _HISTORY_KINDS:
            record.history_wanted.set()
        _follow_activity(record, event)

    async def save_history(self, record: Record, ref: ActorRef) -> None:
        """Store new turns whenever events say the history grew, until the actor stops."""
        while ref.alive:
            await record.history_wanted.wait()
            record.history_wanted = trio.Event()
            try:
                snapshot = await ref.ask(GetSnapshot(), timeout=30)
            except ActorError:
                return
            self.store_turns(record, snapshot.history)
            if record.state == "closed":
                return

    def store_turns(self, record: Record, history: list[Turn]) -> None:
        new = history[record.history_saved :]
        if new:
            self.store.put_history(record.row.id, record.history_saved, new)
            record.history_saved = len(history)


def _follow_activity(record: Record, event: SessionEvent) -> None:
    """The summary a session list shows: task, what it is doing, model calls, tokens."""
    match event.data:
        case UserInputEvent(content=content):
            record.task = record.task or content
            record.activity = "thinking"
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
        case ProcessingEndEvent() | SessionEndEvent():
            record.activity = ""
        case _:
            pass
