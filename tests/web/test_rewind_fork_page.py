"""Rewind and fork on the web page, in a real browser against a real server and
the scripted provider: "Rewind to here" on a user message (with the choice of
what to rewind) cuts the conversation and puts the input back in the box; "Fork
from here" on an assistant message opens a new session that goes on from it."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.web.conftest import TrioThread
from tests.web.test_controls import log_in_and_start

SCRIPT = {
    "conversations": [{"match": "tell me things", "turns": [
        {"text": "First answer."}, {"text": "Second answer."}, {"text": "Third answer."},
    ]}],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_rewind_to_here_then_fork_from_here(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(SCRIPT) as stack:
        assert stack.mock is not None
        log_in_and_start(page, stack.login_url, "tell me things")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".assistant").last).to_contain_text("First answer.")
        composer = page.locator("#composer-text")
        composer.fill("what about bananas")
        page.get_by_role("button", name="Send").click()
        expect(timeline.locator(".assistant").last).to_contain_text("Second answer.")
        expect(page.locator("#session-state")).to_have_text("idle")

        bananas = timeline.locator(".user").nth(1)
        bananas.get_by_role("button", name="Rewind to here").click()
        choice = bananas.get_by_role("form", name="Rewind")
        expect(choice.get_by_label("the conversation")).to_be_checked()
        choice.get_by_role("button", name="Rewind").click()
        expect(timeline.locator(".note.rewind")).to_contain_text("conversation 4 → 2 turns")
        expect(bananas).to_have_class("user rewound")
        expect(timeline.locator(".assistant").nth(1)).to_have_class("assistant rewound")
        expect(composer).to_have_value("what about bananas")

        composer.fill("what about cherries")
        page.get_by_role("button", name="Send").click()
        expect(timeline.locator(".assistant")).to_have_count(3)
        expect(timeline.locator(".assistant").last).to_contain_text("Second answer.")
        expect(page.locator("#session-state")).to_have_text("idle")
        after_rewind = stack.mock.requests[-1].body
        assert b"cherries" in after_rewind and b"bananas" not in after_rewind

        first_answer = timeline.locator(".assistant").first
        first_answer.get_by_role("button", name="Fork from here").click()
        expect(page.locator(".timeline .note").filter(has_text="forked from")).to_contain_text(
            "(2 turns)"
        )
        expect(page).not_to_have_url(stack.login_url)
        page.locator("#composer-text").fill("what about dates")
        page.get_by_role("button", name="Send").click()
        expect(page.locator(".timeline .assistant")).to_have_count(1)
        expect(page.locator(".timeline .assistant").last).to_contain_text("Second answer.")
        expect(page.locator("#session-state")).to_have_text("idle")
        in_fork = stack.mock.requests[-1].body
    assert b"tell me things" in in_fork and b"First answer." in in_fork
    assert b"dates" in in_fork and b"cherries" not in in_fork and b"bananas" not in in_fork
