"""The page in a real browser: log in, start a session, watch it stream, steer it,
answer approvals; the screenshots in docs/ come from here
(``TROUPE_UPDATE_SCREENSHOTS=1`` writes them there)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.web.conftest import HANG_GUARD, TrioThread, screenshot_dir, shell_call

ANSWER = (
    "I'll check the **build** first.\n\n```python\ndef build(path):\n"
    "    return run('make', cwd=path)  # one step\n```\n\n- list the files\n- run the tests"
)
SCRIPT = {
    "turns": [
        {
            "text": ANSWER,
            "reasoning": "The user wants a build check.",
            "event_delay": 0.02,
            "tool_calls": [shell_call("echo hello-from-tool; sleep 3; echo after-sleep")],
        },
        {"tool_calls": [shell_call("printf 'line %s\\n' 1 2 3 4 5 6 7 8 9 10 11 12")]},
        {"text": "All done: the build passes."},
    ],
    "repeat": True,
}


def log_in(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#link")).to_have_text("connected")


def test_log_in_create_stream_steer_and_approve(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    screenshots = screenshot_dir(tmp_path / "screenshots")
    with start_web(SCRIPT) as stack:
        log_in(page, stack.login_url)
        page.get_by_role("button", name="New session").click()
        page.get_by_label("Task").fill("Check that the build passes")
        page.get_by_role("button", name="Start session").click()
        expect(page.locator("#session-title")).to_have_text("Check that the build passes")

        # Streamed Markdown (with a highlighted code block), then the tool call live.
        timeline = page.locator(".timeline")
        expect(timeline.locator(".assistant strong")).to_have_text("build")
        expect(timeline.locator("pre.code .tok-k").first).to_have_text("def")
        expect(timeline.locator(".assistant details.reasoning")).to_be_visible()
        tool = timeline.locator(".tool").first
        expect(tool.locator(".tool-name")).to_have_text("shell")
        expect(tool.locator("pre.output")).to_contain_text("hello-from-tool")
        expect(page.locator("#session-state")).to_have_text("running a tool")

        # Steer while the command runs: Enter in the composer steers a busy session.
        page.locator("#composer-text").fill("also run the linter")
        page.locator("#composer-text").press("Enter")
        expect(timeline.locator(".steer")).to_contain_text("also run the linter")
        expect(timeline.locator(".assistant").last).to_contain_text("All done")
        expect(page.locator("#session-meta")).to_contain_text("iteration 3")
        long_output = timeline.locator(".tool").nth(1)
        expect(long_output.locator("button.more")).to_have_text("show all 13 lines")
        expect(long_output.locator("pre.output")).not_to_contain_text("line 12")
        long_output.locator("button.more").click()
        expect(long_output.locator("pre.output")).to_contain_text("line 12")

        # Approvals, raised the way the server's own tests raise them.
        session = page.url.rsplit("/", 1)[-1]
        approvals = stack.server.registry.record(session).approvals if stack.server else None
        assert approvals is not None
        approved = stack.call_soon(approvals.request, "command", "rm -rf build/")
        banner = page.get_by_role("alertdialog", name="Approval needed")
        expect(banner.locator(".subject")).to_have_text("rm -rf build/")
        expect(page.locator("#session-state")).to_have_text("awaiting approval")
        banner.get_by_role("button", name="Approve once").click()
        assert approved.result(HANG_GUARD / 1000) == (True, None)
        expect(banner).to_have_count(0)

        for_session = stack.call_soon(approvals.request, "command", "git push")
        expect(banner.get_by_role("button", name="Always:")).to_have_count(1)  # no rule offered
        banner.get_by_role("button", name="Always: this exact call").click()
        assert for_session.result(HANG_GUARD / 1000) == (True, None)
        expect(timeline.locator(".note.okay").last).to_have_text(
            "approval approved for this session (exactly this call)"
        )
        rule = "commands starting with `npm test` in /w"
        by_rule = stack.call_soon(partial(approvals.request, "command", "npm test", rule=rule))
        banner.get_by_role("button", name=f"Always: {rule}").click()
        assert by_rule.result(HANG_GUARD / 1000) == (True, None)
        expect(timeline.locator(".note.okay").last).to_have_text(
            "approval approved for this session (by rule)"
        )

        denied = stack.call_soon(approvals.request, "command", "curl example.com | sh")
        expect(banner.locator(".subject")).to_have_text("curl example.com | sh")
        banner.get_by_label("Deny message").fill("no piping to sh")
        banner.get_by_role("button", name="Deny").click()
        assert denied.result(HANG_GUARD / 1000) == (False, "no piping to sh")
        expect(timeline.locator(".note.warn").last).to_contain_text("denied: no piping to sh")
        expect(page.locator("#session-state")).to_have_text("idle")

        timeline.locator(".tool .tool-head summary").first.click()
        page.screenshot(path=str(screenshots / "session-view.png"))

        page.get_by_role("link", name="← Sessions").click()
        row = page.locator("tr[data-session]")
        expect(row).to_have_count(1)
        expect(row.locator(".task a")).to_have_text("Check that the build passes")
        expect(row.locator(".state")).to_have_text("idle")
        expect(row.locator("td.num").first).to_have_text("3")
        page.get_by_role("button", name="New session").click()
        page.get_by_label("Task").fill("Refactor the session store")
        page.screenshot(path=str(screenshots / "session-list.png"))
        page.get_by_role("button", name="New session").click()
        page.get_by_label("Filter sessions").fill("nothing-matches")
        expect(page.locator(".empty")).to_have_text("No session matches the filter.")
        page.get_by_label("Filter sessions").fill("build")
        expect(row).to_have_count(1)
