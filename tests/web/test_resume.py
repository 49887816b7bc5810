"""The page keeps up: subagents in the tree, reloads and several browsers with
nothing missed or doubled, and a server killed and started again under the page."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.web.conftest import HANG_GUARD, TrioThread, free_port, shell_call, start_serve

CHILDREN = ("one", "two", "three")
SUBAGENTS = {
    "conversations": [
        {"match": "delegate", "turns": [
            {"tool_calls": [{"name": "spawn_agent", "arguments": {"task": f"CHILD {name}"}}
                            for name in CHILDREN]},
            {"tool_calls": [{"name": "wait", "arguments": {"agent_ids": ["a-1", "a-2", "a-3"],
                                                            "timeout_ms": 60_000}}]},
            {"text": "All three children finished."},
        ]},
        *({"match": f"CHILD {name}", "turns": [
            # A model that takes a moment to answer, as real ones do: the page follows
            # each child from its spawn (a subagent's events are live only).
            {"tool_calls": [shell_call(
                f"until [ -e release ]; do sleep 0.05; done; echo child-{name}-done"
            )], "delay": 1.0},
            {"text": f"child {name} finished"},
        ]} for name in CHILDREN),
    ],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip

ROUNDS = 8
ROUNDS_SCRIPT = {
    "turns": [{"tool_calls": [shell_call(f"sleep 0.4; echo round-{n}")]} for n in range(ROUNDS)]
    + [{"text": "All rounds done."}],
    "repeat": False,
}


def open_logged_in(browser: Browser, url: str) -> Page:
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.set_default_timeout(HANG_GUARD)
    page.goto(url)
    expect(page.locator("#link")).to_have_text("connected")
    return page


def start_session(page: Page, task: str) -> str:
    page.get_by_role("button", name="New session").click()
    page.get_by_label("Task").fill(task)
    page.get_by_role("button", name="Start session").click()
    expect(page.locator(".timeline .user").first).to_contain_text(task)
    return page.url.rsplit("/", 1)[-1]


def test_three_subagents_run_in_parallel_in_the_tree(
    start_web: Callable[..., TrioThread], browser: Browser
) -> None:
    with start_web(SUBAGENTS) as stack:
        page = open_logged_in(browser, stack.login_url)
        start_session(page, "delegate three jobs")
        children = page.locator("#tree ul > li")
        expect(children).to_have_count(3)
        # All three are running their commands at the same moment.
        expect(children.filter(has_text="running a tool")).to_have_count(3)
        # Into child two while the tree holds still: released first, the children's
        # events re-drew the tree under the click, which then went nowhere.
        children.filter(has_text="CHILD two").get_by_role("link").click()
        expect(page.locator("#session-title")).to_have_text("CHILD two")
        # Their commands hold until now (they slept 4 s), so the page saw all three run.
        assert stack.server is not None
        (stack.server.config.working_dir / "release").touch()
        expect(page.locator(".timeline .tool pre.output")).to_contain_text("child-two-done")
        expect(children.filter(has_text="done")).to_have_count(3)
        page.locator("#tree > li > a").click()
        expect(page.locator(".timeline .assistant").last).to_contain_text("All three children")
        page.context.close()


def test_reload_mid_run_and_two_browsers_see_the_same_stream(
    start_web: Callable[..., TrioThread], browser: Browser
) -> None:
    with start_web(ROUNDS_SCRIPT) as stack:
        first = open_logged_in(browser, stack.login_url)
        session = start_session(first, "count the rounds")
        second = open_logged_in(browser, stack.login_url)  # another browser, own login
        second.goto(second.url.split("#")[0] + f"#/s/{session}")
        outputs = first.locator(".timeline .tool pre.output")
        expect(outputs.nth(2)).to_contain_text("round-2")
        first.reload()  # mid-run: replayed from the store, then live
        expect(first.locator("#link")).to_have_text("connected")
        for page in (first, second):
            expect(page.locator(".timeline .assistant").last).to_contain_text("All rounds done.")
            texts = page.locator(".timeline .tool pre.output").all_inner_texts()
            assert [text.splitlines()[0] for text in texts] == [
                f"round-{n}" for n in range(ROUNDS)
            ], texts
            expect(page.locator(".timeline .user")).to_have_count(1)
            expect(page.locator("#session-meta")).to_contain_text(f"iteration {ROUNDS + 1}")
        assert first.locator(".timeline").inner_text() == second.locator(".timeline").inner_text()
        first.context.close()
        second.context.close()


def test_server_killed_and_restarted_under_the_page(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    script = {"turns": [{"tool_calls": [shell_call("echo started; sleep 60")]}], "repeat": True}
    with start_web(script, server=False) as mock:
        assert mock.mock is not None
        data, work, port = tmp_path / "data", tmp_path / "work", free_port()
        work.mkdir(exist_ok=True)
        process, login = start_serve(data, work, mock.mock.base_url, port)
        try:
            page.goto(login)
            expect(page.locator("#link")).to_have_text("connected")
            start_session(page, "a long job")
            expect(page.locator(".timeline .tool pre.output")).to_contain_text("started")
            expect(page.locator("#session-state")).to_have_text("running a tool")
            os.kill(process.pid, signal.SIGKILL)
            process.wait(HANG_GUARD / 1000)
            expect(page.locator("#link")).to_have_text("reconnecting…")
            process, _ = start_serve(data, work, mock.mock.base_url, port)
            expect(page.locator("#link")).to_have_text("connected")
            expect(page.locator("#session-state")).to_have_text("interrupted")
            expect(page.locator(".timeline .alert.warn").last).to_contain_text("Interrupted")
            expect(page.locator(".timeline .user")).to_have_count(1)
        finally:
            process.kill()
            process.wait(HANG_GUARD / 1000)


def reconnect(page: Page) -> None:
    """Drop the page's WebSocket and wait until the page has connected again."""
    page.evaluate(
        """() => new Promise((done) => {
            const link = window.troupe.link, opened = link.onOpen;
            link.onOpen = () => { link.onOpen = opened; opened(); done(); };
            link.socket.close();
        })"""
    )
    expect(page.locator("#link")).to_have_text("connected")


def test_what_the_user_is_typing_survives_a_reconnect(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web({"turns": [{"text": "ok"}]}) as stack:
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        page.get_by_role("link", name="Environments").click()
        page.get_by_label("Name", exact=True).fill("half-typed")
        page.get_by_label("Target").fill("ssh://someone@build-box")
        reconnect(page)
        expect(page.get_by_label("Name", exact=True)).to_have_value("half-typed")
        expect(page.get_by_label("Target")).to_have_value("ssh://someone@build-box")
        # ... and the list under the form is still shown.
        expect(page.locator("tr[data-environment]")).to_have_count(1)
        # A request made while the page reconnects is sent once it has connected.
        listed = page.evaluate(
            """async () => {
                window.troupe.link.socket.close();
                return (await window.troupe.link.request("list_environments")).environments;
            }"""
        )
        assert [env["address"] for env in listed] == ["/environments/local"], listed
        expect(page.locator("#link")).to_have_text("connected")

        page.get_by_role("link", name="Sessions").click()
        start_session(page, "say ok")
        expect(page.locator(".timeline .assistant").last).to_contain_text("ok")
        page.get_by_label("Message").fill("a message not sent yet")
        reconnect(page)
        expect(page.get_by_label("Message")).to_have_value("a message not sent yet")
        expect(page.locator(".timeline .user")).to_have_count(1)
        expect(page.locator(".timeline .assistant")).to_have_count(1)
