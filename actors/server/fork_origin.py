"""Where a forked session comes from, as the session list shows it.

The origin is the fork's ``forked_from`` event, its first after ``session_start``:
durable like every event, so a restarted server reads it back from the first few
events of the session (no extra table, no scan of a long session's events)."""

from __future__ import annotations

import msgspec

from actors.store import Store
from protocol.events import ForkedFromEvent, UnknownEventKind, decode_event_data

FIRST_EVENTS = 4
"""How many of a session's first events are read for its ``forked_from``."""


def fork_origin(event: ForkedFromEvent | None) -> str | None:
    """``SESSION@SEQ`` (``SESSION`` alone when forked at its end), or None."""
    if event is None:
        return None
    return f"{event.source}@{event.at_seq}" if event.at_seq else event.source


async def stored_fork_origin(store: Store, session_id: str) -> str | None:
    for row in await store.events_after(session_id, 0, FIRST_EVENTS):
        if row.kind != ForkedFromEvent.kind:
            continue
        try:
            data = decode_event_data(row.kind, row.data)
        except (msgspec.DecodeError, msgspec.ValidationError, UnknownEventKind):
            return None
        return fork_origin(data) if isinstance(data, ForkedFromEvent) else None
    return None
