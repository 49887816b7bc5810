"""The page shows background subagents: the input that spawns one ends with a line
naming it as still running, the agents tree marks it as background, and its result
arrives in the timeline as a follow-up input the parent answers."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Browser, expect

from tests.web.conftest import TrioThread
from tests.web.test_resume import open_logged_in, start_session

SCRIPT = {
    "conversations": [
        {"match": "delegate", "turns": [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {
                "task": "CHILD in the background", "background": True}}]},
            {"text": "It works in the background."},
            {"text": "The child reported back."},
        ]},
        {"match": "CHILD", "turns": [
            {"tool_calls": [{"name": "shell", "arguments": {
                "command": "while [ ! -e release ]; do sleep 0.05; done; echo child-done",
                "timeout_ms": 600_000}}]},
            {"text": "child finished its job"},
        ]},
    ],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_a_background_subagent_on_the_page(
    start_web: Callable[..., TrioThread], browser: Browser
) -> None:
    with start_web(SCRIPT) as stack:
        page = open_logged_in(browser, stack.login_url)
        start_session(page, "delegate one background job")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".note.background")).to_have_text(
            "still running in the background: a-1 (each result comes back as a follow-up)"
        )
        child = page.locator("#tree ul > li")
        expect(child).to_contain_text("CHILD in the background")
        expect(child.locator(".state")).to_contain_text("· background")
        assert stack.server is not None
        (stack.server.config.working_dir / "release").touch()
        expect(timeline.locator(".user").last).to_contain_text(
            "[Background subagent a-1 completed after 2 turns"
        )
        expect(timeline.locator(".assistant").last).to_contain_text("The child reported back.")
        page.context.close()
