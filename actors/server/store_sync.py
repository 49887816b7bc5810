"""Keeping the store up to date with the live sessions.

A hub sink (:meth:`StoreSync.observe`) queues every durable event for the store
and follows the session's state; when events say the history grew, a task per
session (:meth:`StoreSync.save_history`) asks the session for a snapshot and
stores the new turns. Once frozen (the server is going down and its sessions will
resume), nothing more is recorded.
"""

from __future__ import annotations

import trio

from actors.kernel import ActorError, ActorRef
from actors.server.records import Record
from actors.store import Store
from protocol.events import (
    LoopStateEvent,
    ProcessingEndEvent,
    SessionEndEvent,
    SessionEvent,
    UserInputEvent,
)
from protocol.session import GetSnapshot, Turn

_HISTORY_KINDS = frozenset(
    {"user_input", "assistant_text_start", "assistant_text_end", "steering_injected",
     "loop_detection", "processing_end", "session_end", "turn_limit"}
)  # fmt: skip
"""Events after which the session's history may have grown."""


class StoreSync:
    """Writes the sessions' events, states and history turns to the store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.frozen = False

    def freeze(self) -> None:
        self.frozen = True

    def observe(self, record: Record, event: SessionEvent) -> None:
        """A hub sink: quick, never raises (it runs inside the session's emit)."""
        if self.frozen:
            return
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
