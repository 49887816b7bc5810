"""A steer sent from the web page shows as queued at once, and as applied when the
session takes it before its next model call (issue 31, point 10). The scripted
model's command holds the turn until the test has seen the queued steer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.web.conftest import TrioThread, shell_call
from tests.web.test_controls import log_in_and_start

HOLD = "echo waiting; until [ -e release ]; do sleep 0.1; done; echo released"
HELD = {
    "conversations": [{"match": "hold on", "turns": [
        {"tool_calls": [shell_call(HOLD)]},
        {"text": "Steered as asked."},
    ]}],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_a_steer_shows_queued_at_once_then_applied(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    with start_web(HELD) as stack:
        log_in_and_start(page, stack.login_url, "hold on")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".tool pre.output")).to_contain_text("waiting")
        expect(page.locator("#session-state")).to_have_text("running a tool")

        page.locator("#composer-text").fill("use **tabs**, not spaces")
        page.locator("#composer-text").press("Enter")
        queued = page.locator(".queued-steers li.steer.queued")
        expect(queued).to_have_count(1)
        expect(queued.locator(".who")).to_contain_text("queued")
        expect(queued.locator(".md strong")).to_have_text("tabs")
        expect(page.locator("#composer-text")).to_have_value("")
        expect(timeline.locator(".steer")).to_have_count(0)  # not applied while it runs
        # Queued until the session's next model call, which the held command delays.
        expect(page.locator("#session-state")).to_have_text("running a tool")
        expect(queued).to_have_count(1)

        (tmp_path.resolve() / "work" / "release").touch()
        applied = timeline.locator("li.steer.applied")
        expect(applied).to_have_count(1)
        expect(applied.locator(".who")).to_contain_text("applied")
        expect(applied.locator(".md")).to_contain_text("use tabs, not spaces")
        expect(page.locator(".queued-steers li")).to_have_count(0)
        expect(timeline.locator(".assistant").last).to_contain_text("Steered as asked.")
        expect(page.locator("#session-state")).to_have_text("idle")
        assert stack.mock is not None
        bodies = [r.json() for r in stack.mock.requests if r.method == "POST"]
        assert "use **tabs**, not spaces" not in str(bodies[0])
        assert "use **tabs**, not spaces" in str(bodies[-1])  # the model got it
