"""Tool calls that change files show as diffs, and a failing call stands out: in a
real browser, with the real tools changing real files."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.web.conftest import TrioThread

PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch"
SCRIPT = {
    "conversations": [
        {"match": "codex edits", "turns": [
            {"tool_calls": [{"name": "write_file",
                             "arguments": {"file_path": "notes.txt", "content": "alpha\nbeta\n"}}]},
            {"tool_calls": [{"name": "apply_patch", "arguments": {"patch": PATCH}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "missing.txt"}}]},
            {"text": "Edited with a patch."},
        ]},
        {"match": "claude edits", "turns": [
            {"tool_calls": [{"name": "edit_file", "arguments": {
                "file_path": "notes.txt", "old_string": "gamma", "new_string": "delta"}}]},
            {"text": "Edited in place."},
        ]},
    ],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def start(page: Page, task: str, profile: str) -> None:
    page.get_by_role("link", name="Sessions", exact=True).click()
    page.get_by_role("button", name="New session").click()
    page.get_by_label("Task").fill(task)
    page.get_by_label("Profile").select_option(profile)
    page.get_by_role("button", name="Start session").click()
    expect(page.locator(".timeline .user").first).to_contain_text(task)


def test_file_changes_show_as_diffs_and_errors_stand_out(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(SCRIPT) as stack:
        assert stack.server is not None
        notes = stack.server.config.working_dir / "notes.txt"
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")

        start(page, "codex edits", "openai")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".assistant").last).to_contain_text("Edited with a patch.")
        written, patched, failed = (timeline.locator(".tool").nth(i) for i in range(3))
        expect(written.locator(".tool-name")).to_have_text("write_file")
        expect(written.locator(".diff .d-add")).to_have_text(["+alpha", "+beta", "+"])
        expect(patched.locator(".tool-name")).to_have_text("apply_patch")
        expect(patched.locator(".diff .d-del")).to_have_text(["-beta"])
        expect(patched.locator(".diff .d-add")).to_have_text(["+gamma"])
        expect(patched.locator(".diff .d-ctx")).to_contain_text([" alpha"])
        assert notes.read_text() == "alpha\ngamma\n"
        # A failed call is marked, and its error shown in full.
        expect(failed).to_have_class("tool failed")
        expect(failed.locator("pre.output")).to_contain_text("missing.txt")
        expect(written).not_to_have_class("tool failed")

        start(page, "claude edits", "anthropic")
        expect(timeline.locator(".assistant").last).to_contain_text("Edited in place.")
        edited = timeline.locator(".tool").first
        expect(edited.locator(".tool-name")).to_have_text("edit_file")
        expect(edited.locator(".diff .d-del")).to_have_text(["-gamma"])
        expect(edited.locator(".diff .d-add")).to_have_text(["+delta"])
        assert notes.read_text() == "alpha\ndelta\n"


DRAWN = """async () => {
  const { Stream } = await import("/stream.js");
  const stream = new Stream("probe");
  const calls = [
    // stored before events carried their diff fields: its tool's declaration says
    {call_id: "old", tool_name: "edit_file",
     arguments: {file_path: "n.txt", old_string: "one", new_string: "two"}},
    // a tool the page has never heard of, drawn by the fields the event names
    {call_id: "named", tool_name: "project_rewrite", tool_kind: "edit",
     arguments: {target: "m.txt", after: "three"},
     diff: {path: "target", new: "after", old: null, patch: null}},
    // an edit tool's name, but the event says its call shows no diff
    {call_id: "none", tool_name: "write_file", arguments: {file_path: "x", content: "y"},
     diff: null},
  ];
  calls.forEach((data, n) => stream.apply("tool_call_start", data, {seq: n + 1}));
  return [...stream.node.querySelectorAll("li.tool")].map(
    (li) => [...li.querySelectorAll(".diff span")].map((span) => span.textContent));
}"""


def test_a_call_is_drawn_from_the_fields_its_event_names_or_else_its_tools(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    """The page names no tool: an event's ``diff`` fields draw the call, and an
    event stored before events carried them is drawn from the built-in tools'
    declarations, which the server serves as a module (``/tool_diffs.js``)."""
    with start_web(SCRIPT) as stack:
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        old, named, none = page.evaluate(DRAWN)
        assert old == ["n.txt", "-one", "+two"]
        assert named == ["new content of m.txt", "+three"]
        assert none == []
