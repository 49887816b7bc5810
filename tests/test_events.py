"""One vocabulary of events: the Structs, ``troupe schema``, the docs and the store agree."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import msgspec
import pytest

from actors.server.recovery import recover_session
from actors.store import db, open_store
from actors.store.db import Op
from protocol.event_docs import BEGIN, END, event_reference, rewrite
from protocol.events import (
    EPHEMERAL_KINDS,
    EVENT_TYPES,
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantTextEndEvent,
    EventBody,
    InputInterruptedEvent,
    ProcessingEndEvent,
    SessionEvent,
    ToolCallEndEvent,
    UnknownEventKind,
    WarningEvent,
    decode_event_data,
    event_data,
    event_fields,
)
from protocol.session import SessionConfig
from protocol.wire import Event, protocol_schema
from tests.event_schema import check_event_frame

ROOT = Path(__file__).resolve().parents[1]


def all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *all_subclasses(sub)}
    return found


def wire_names(cls: type[msgspec.Struct]) -> list[str]:
    return [field.encode_name for field in msgspec.structs.fields(cls)]


def test_every_event_struct_is_a_kind_of_the_union() -> None:
    """Adding a kind is one place: a Struct left out of EventData is caught here."""
    assert set(EVENT_TYPES.values()) == all_subclasses(EventBody)
    assert len(EVENT_TYPES) == len({cls.kind for cls in EVENT_TYPES.values()})
    assert {"approval_request", "approval_resolved", "input_interrupted"} <= set(EVENT_TYPES)
    assert {"assistant_text_delta", "tool_call_output_delta"} <= EPHEMERAL_KINDS
    assert "tool_call_end" not in EPHEMERAL_KINDS


def test_troupe_schema_describes_every_kind_with_its_fields() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "actors.cli", "schema"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
    )  # fmt: skip
    schema = json.loads(done.stdout)
    assert schema == json.loads(json.dumps(protocol_schema()))
    event = schema["$defs"]["Event"]
    assert event["properties"]["kind"]["enum"] == list(EVENT_TYPES)
    branches = {b["properties"]["kind"]["const"]: b for b in event["oneOf"]}
    assert list(branches) == list(EVENT_TYPES)
    for kind, cls in EVENT_TYPES.items():
        ref = branches[kind]["properties"]["data"]["$ref"].rsplit("/", 1)[-1]
        assert list(schema["$defs"][ref].get("properties", {})) == wire_names(cls), kind


def test_the_schema_rejects_an_event_whose_data_does_not_fit() -> None:
    good = Event("s", "s", 3, 1.0, "tool_call_end", event_fields(ToolCallEndEvent("c", "t", "x")))
    check_event_frame(good)
    for bad in (
        msgspec.structs.replace(good, data={**good.data, "is_error": "no"}),
        msgspec.structs.replace(good, data={"call_id": "c"}),
        msgspec.structs.replace(good, kind="no_such_kind"),
    ):
        with pytest.raises(jsonschema.ValidationError):
            check_event_frame(bad)


def test_docs_list_exactly_the_kinds_that_exist() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text()
    assert rewrite(text) == text, "run: python -m protocol.event_docs docs/protocol.md"
    section = text[text.index(BEGIN) : text.index(END)]
    listed = re.findall(r"^\| `(\w+)`", section, flags=re.MULTILINE)
    assert listed == list(EVENT_TYPES)
    assert event_reference() in text


def test_a_typed_event_keeps_the_v1_frame_shape() -> None:
    """``kind`` stays on the frame and ``data`` holds the fields by their wire names,
    so a client written for the dict keeps working."""
    warning = WarningEvent("Context usage at ~85%", "context_usage")
    assert event_fields(warning) == {"message": "Context usage at ~85%", "kind": "context_usage"}
    event = SessionEvent("s-1", 4, 1.0, warning)
    assert event.kind == "warning"
    frame = Event("s-1", "s-1", 4, 1.0, event.kind, event_fields(event.data))
    assert frame.body() == warning
    assert Event("s-1", "s-1", 5, 1.0, "from_the_future", {"x": 1}).body() is None
    with pytest.raises(UnknownEventKind):
        event_data("from_the_future", {})


OLD_ROWS = [
    # Written by the dict-based events of version 0.1.0, byte for byte.
    ("session_start", b'{"profile":"openai","model":"gpt-5","working_directory":"/w"}'),
    ("user_input", b'{"content":"list the files"}'),
    ("assistant_text_start", b"{}"),
    (
        "assistant_text_end",
        b'{"text":"","reasoning":null,"tool_calls":[{"id":"c1","name":"shell"}],'
        b'"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7,'
        b'"reasoning_tokens":null,"cache_read_tokens":null,"cache_write_tokens":null}}',
    ),
    ("tool_call_start", b'{"call_id":"c1","tool_name":"shell","arguments":{"command":"ls"}}'),
    ("tool_call_end", b'{"call_id":"c1","tool_name":"shell","output":"a\\n","is_error":false}'),
    ("warning", b'{"kind":"context_usage","message":"Context usage at ~85%"}'),
    ("turn_limit", b'{"limit":"max_turns","total_turns":2}'),
    ("approval_request", b'{"request_id":"ap-1","action":"command","subject":"rm -rf b"}'),
]


async def test_events_stored_before_the_typed_vocabulary_still_load(tmp_path: Path) -> None:
    now = 1763820000.0
    async with open_store(tmp_path) as store:
        store.put_session("s-old", "openai", "gpt-5", "/environments/local", None, SessionConfig())
        await store.flush()
    # The rows exactly as the earlier version wrote them, straight into the database.
    connection = db.connect(tmp_path / "troupe.db")
    ops = [Op("event", ("s-old", n, now, kind, blob)) for n, (kind, blob) in enumerate(OLD_ROWS, 1)]
    db.apply(connection, ops)
    connection.close()

    async with open_store(tmp_path) as store:
        (row,) = await store.sessions()
        seqs = await store.last_seqs()
        last_seq, interrupted = await recover_session(store, row, seqs["s-old"])
        assert interrupted and last_seq == len(OLD_ROWS) + 3
        rows = await store.events_after("s-old", 0)
    bodies = [decode_event_data(r.kind, r.data) for r in rows]
    assert [type(b).kind for b in bodies] == [kind for kind, _ in OLD_ROWS] + [
        "approval_resolved",
        "input_interrupted",
        "processing_end",
    ]
    end = bodies[3]
    assert isinstance(end, AssistantTextEndEvent) and end.usage.total_tokens == 7
    assert bodies[6] == WarningEvent("Context usage at ~85%", "context_usage")
    assert isinstance(bodies[8], ApprovalRequestEvent)
    assert isinstance(bodies[10], InputInterruptedEvent)
    assert bodies[9] == ApprovalResolvedEvent("ap-1", False, bodies[10].message)
    assert bodies[11] == ProcessingEndEvent("idle", interrupted=True)
    for r in rows:  # and each, replayed as the gateway sends it, fits the schema
        check_event_frame(
            Event("s-old", r.session_id, r.seq, r.timestamp, r.kind, json.loads(r.data))
        )
