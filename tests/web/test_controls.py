"""The composer's other controls in a real browser: follow-up, interrupt, abort and
extend limit, each against the scripted provider and a real server."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Dialog, Page, expect

from tests.web.conftest import TrioThread, shell_call


def log_in_and_start(page: Page, url: str, task: str, *, max_turns: int = 0) -> None:
    page.goto(url)
    expect(page.locator("#link")).to_have_text("connected")
    page.get_by_role("button", name="New session").click()
    page.get_by_label("Task").fill(task)
    if max_turns:
        page.get_by_label("Max turns").fill(str(max_turns))
    page.get_by_role("button", name="Start session").click()
    expect(page.locator(".timeline .user").first).to_contain_text(task)


FOLLOW_UP = {
    "conversations": [{"match": "build it", "turns": [
        {"tool_calls": [shell_call(
            "echo building; until [ -e release ]; do sleep 0.05; done; echo built"
        )]},
        {"text": "The build is done."},
        {"text": "The tests pass too."},
    ]}],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_follow_up_is_queued_and_runs_after_the_current_input(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(FOLLOW_UP) as stack:
        log_in_and_start(page, stack.login_url, "build it")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".tool pre.output")).to_contain_text("building")
        page.locator("#composer-text").fill("then run the tests")
        page.get_by_role("button", name="Follow-up").click()
        expect(page.locator("#composer-text")).to_have_value("")
        # The build holds until now (it slept 3 s): the follow-up came while it ran.
        assert stack.server is not None
        (stack.server.config.working_dir / "release").touch()
        # The follow-up waits for the first input: it is a new user input, not a steer.
        expect(timeline.locator(".assistant").last).to_contain_text("The tests pass too.")
        users = timeline.locator(".user")
        expect(users).to_have_count(2)
        expect(users.nth(1)).to_contain_text("then run the tests")
        expect(timeline.locator(".steer")).to_have_count(0)
        texts = timeline.locator(".assistant").all_inner_texts()
        first = next(i for i, t in enumerate(texts) if "The build is done." in t)
        assert "The tests pass too." in texts[-1] and first < len(texts) - 1, texts
        expect(page.locator("#session-state")).to_have_text("idle")


LONG_COMMAND = {
    "conversations": [{"match": "a long job", "turns": [
        {"tool_calls": [shell_call("echo started; sleep 60; echo never")]},
        {"tool_calls": [shell_call("echo again; sleep 60; echo never")]},
        {"text": "Back after the interruption."},
    ]}],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_interrupt_stops_a_running_command_and_the_session_takes_new_input(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(LONG_COMMAND) as stack:
        log_in_and_start(page, stack.login_url, "a long job")
        timeline = page.locator(".timeline")
        expect(timeline.locator(".tool pre.output")).to_contain_text("started")
        expect(page.locator("#session-state")).to_have_text("running a tool")
        page.get_by_role("button", name="Interrupt").click()
        expect(page.locator("#session-state")).to_have_text("interrupted")
        expect(timeline.locator(".alert.warn").last).to_contain_text("Interrupted")
        expect(timeline.locator(".tool pre.output")).not_to_contain_text("never")
        # Still open: a new message is a new input; Esc in the composer interrupts too.
        composer = page.locator("#composer-text")
        composer.fill("carry on")
        composer.press("Enter")
        expect(timeline.locator(".tool pre.output").nth(1)).to_contain_text("again")
        expect(page.locator("#session-state")).to_have_text("running a tool")
        composer.press("Escape")
        expect(page.locator("#session-state")).to_have_text("interrupted")
        composer.fill("and now answer")
        composer.press("Enter")
        expect(timeline.locator(".assistant").last).to_contain_text("Back after the interruption.")
        expect(page.locator("#session-state")).to_have_text("idle")


def test_abort_closes_the_session_after_a_confirmation(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(LONG_COMMAND) as stack:
        log_in_and_start(page, stack.login_url, "a long job")
        timeline = page.locator(".timeline")
        expect(page.locator("#session-state")).to_have_text("running a tool")
        asked: list[str] = []

        def dismiss(dialog: Dialog) -> None:
            asked.append(dialog.message)
            dialog.dismiss()

        page.once("dialog", dismiss)
        page.get_by_role("button", name="Abort").click()
        expect(page.locator("#session-state")).to_have_text("running a tool")
        assert asked and "Abort" in asked[0], asked

        def accept(dialog: Dialog) -> None:
            dialog.accept()

        page.once("dialog", accept)
        page.get_by_role("button", name="Abort").click()
        expect(page.locator("#session-state")).to_have_text("closed")
        expect(timeline.locator(".note").last).to_contain_text("session ended")
        page.get_by_role("link", name="← Sessions").click()
        expect(page.locator("tr[data-session] .state")).to_have_text("closed")


LIMITED = {
    "conversations": [{"match": "three steps", "turns": [
        {"tool_calls": [shell_call("echo step-1")]},
        {"tool_calls": [shell_call("echo step-2")]},
        {"text": "Finished all steps."},
    ]}],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_extend_limit_lets_a_stopped_session_go_on(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(LIMITED) as stack:
        log_in_and_start(page, stack.login_url, "three steps", max_turns=1)
        timeline = page.locator(".timeline")
        expect(timeline.locator(".alert.warn")).to_contain_text("Limit reached")
        expect(page.locator("#session-state")).to_have_text("idle")
        expect(timeline.locator(".tool pre.output")).to_have_count(1)
        page.get_by_role("button", name="Extend limit").click()
        expect(page.locator(".toast.ok")).to_have_text("max turns now 21")
        # extend_limit continues the same input: no new message was needed.
        expect(timeline.locator(".assistant").last).to_contain_text("Finished all steps.")
        expect(timeline.locator(".user")).to_have_count(1)
        outputs = timeline.locator(".tool pre.output").all_inner_texts()
        assert [o.splitlines()[0] for o in outputs] == ["step-1", "step-2"], outputs
        expect(page.locator("#session-state")).to_have_text("idle")
        # Nothing stopped at a limit now: the server refuses, and the page says why.
        page.get_by_role("button", name="Extend limit").click()
        expect(page.locator(".toast.bad")).to_contain_text("did not stop at an iteration limit")
