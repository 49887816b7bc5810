"""The terminal draws a call's diff from the fields its ``tool_call_start`` event
carries (issue 36: a client needs no catalogue of the tools), and an event stored
before events carried them still shows its diff, by Troupe's own tool of that name."""

from __future__ import annotations

import io

from actors.commands.render import TextRenderer
from protocol.diff_fields import DiffFields
from protocol.events import ToolCallEndEvent, ToolCallStartEvent


def _shown(*events: ToolCallStartEvent | ToolCallEndEvent) -> tuple[str, TextRenderer]:
    out = io.StringIO()
    renderer = TextRenderer(out, colour=False)
    for event in events:
        renderer.show(event)
    return out.getvalue(), renderer


def test_the_fields_the_event_carries_draw_the_diff_whatever_the_tool() -> None:
    fields = DiffFields(path="target", new="after", old="before")
    arguments = {"target": "notes.txt", "before": "one\ntwo\n", "after": "one\nthree\n"}
    shown, renderer = _shown(
        ToolCallStartEvent("c1", "project_rewrite", arguments, "edit", fields),
        ToolCallEndEvent("c1", "project_rewrite", "ok"),
    )
    assert "--- notes.txt" in shown and "+++ notes.txt" in shown
    assert "-two" in shown and "+three" in shown
    assert renderer.edits == [(fields, arguments)]  # /diff draws it again from these


def test_a_call_whose_event_says_no_diff_shows_none() -> None:
    arguments = {"file_path": "x.txt", "content": "a\n"}  # write_file's, but declared none
    shown, renderer = _shown(ToolCallStartEvent("c1", "write_file", arguments, "edit", None))
    assert "+++" not in shown and renderer.edits == []


def test_an_event_stored_before_it_carried_the_fields_still_shows_its_diff() -> None:
    arguments = {"file_path": "x.txt", "content": "a\nb\n"}
    shown, _ = _shown(ToolCallStartEvent("c1", "write_file", arguments))
    assert "+++ x.txt (written, 2 lines)" in shown and "+b" in shown
