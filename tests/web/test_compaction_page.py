"""Compaction and the cost ledger on the web page, in a real browser: the Compact
button (with the composer's text as the summary's instructions) summarizes the
conversation, the timeline notes it, and the header shows the ledger."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from actors.session.compaction import TRANSCRIPT_MARKER
from tests.web.conftest import TrioThread, shell_call
from tests.web.test_controls import log_in_and_start

SCRIPT = {
    "conversations": [
        {"match": TRANSCRIPT_MARKER, "turns": [{"text": "Summary: six echoes."}]},
        {"match": "echo six times", "turns": [
            *[{"tool_calls": [shell_call(f"echo round {n}")]} for n in range(6)],
            {"text": "Six echoes done."},
        ]},
    ],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_the_compact_button_summarizes_with_instructions(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(SCRIPT) as stack:
        log_in_and_start(page, stack.login_url, "echo six times")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".assistant").last).to_contain_text("Six echoes done.")
        expect(page.locator("#session-meta")).to_contain_text("compactions included")
        page.locator("#composer-text").fill("keep every round number")
        page.get_by_role("button", name="Compact").click()
        expect(timeline.locator(".note", has_text="compaction (summary)")).to_have_count(1)
        expect(page.locator("#composer-text")).to_have_value("")
        assert stack.mock is not None
        bodies = [r.body for r in stack.mock.requests]
    summary = [b for b in bodies if TRANSCRIPT_MARKER.encode() in b]
    assert len(summary) == 1 and b"keep every round number" in summary[0]
