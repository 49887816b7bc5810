"""Checking events against the published JSON Schema (what ``troupe schema`` prints).

The session and wire test helpers run every event they see through
:func:`check_event_frame`, so each event the code emits in any of those tests is
validated against the schema, not only the ones a dedicated test thinks of.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema
import msgspec

from protocol.events import SessionEvent, event_fields
from protocol.wire import Event, protocol_schema


@functools.cache
def _event_validator() -> jsonschema.Draft202012Validator:
    schema = protocol_schema()
    root = {"$schema": schema["$schema"], "$ref": "#/$defs/Event", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(root)


def check_event_frame(frame: Event | SessionEvent | dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``frame`` (a received frame, or an
    in-process event as the gateway would send it) fits the schema."""
    if isinstance(frame, SessionEvent):
        frame = Event(
            frame.session_id, frame.session_id, frame.seq, frame.timestamp, frame.kind,
            event_fields(frame.data),
        )  # fmt: skip
    plain = msgspec.to_builtins(frame) if isinstance(frame, Event) else frame
    _event_validator().validate(plain)
