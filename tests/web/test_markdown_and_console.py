"""The web page renders a Markdown table the model writes as a table (and hostile
markup in it as text), and its console stays clean from a browser's first visit,
through the login, to a session's run (issue 31, point 10)."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import ConsoleMessage, Page, Request, Response, expect

from tests.web.conftest import TrioThread, shell_call

TABLE = "Results:\n\n| file | tests |\n|---|---:|\n| a.py | 3 |\n| b.py | 12 |\n\nAll good."


def test_a_markdown_table_renders_as_a_table(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    problems: list[str] = []

    def note(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"{message.type}: {message.text}")

    page.on("console", note)
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    with start_web({"turns": [{"text": TABLE}]}) as stack:
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        page.get_by_role("button", name="New session").click()
        page.get_by_label("Task").fill("count the tests")
        page.get_by_role("button", name="Start session").click()
        table = page.locator(".timeline .assistant table.md-table").last
        expect(table.locator("th")).to_have_text(["file", "tests"])
        expect(table.locator("tbody tr")).to_have_count(2)
        expect(table.locator("tbody tr").last.locator("td")).to_have_text(["b.py", "12"])
        expect(page.locator(".timeline .assistant").last).to_contain_text("All good.")
    assert problems == [], problems


def settle(page: Page) -> None:
    """Before the test leaves a page: its requests answered (the icon is asked for
    after the load event). Leaving aborts one still in flight, which ``watch`` would
    count although the test, not the page, cut it short."""
    page.wait_for_load_state("networkidle")


def watch(page: Page) -> list[str]:
    """Everything a developer would see as wrong: console errors and warnings (a CSP
    violation is one), uncaught errors, failed requests and answers of 400 or more."""
    problems: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"{message.type}: {message.text} ({message.location.get('url')})")

    def response(answer: Response) -> None:
        if answer.status >= 400:
            problems.append(f"HTTP {answer.status}: {answer.url}")

    def failed(request: Request) -> None:
        problems.append(f"failed: {request.url} ({request.failure})")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on("response", response)
    page.on("requestfailed", failed)
    return problems


RUN = {
    "conversations": [{"match": "list the files", "turns": [
        {"tool_calls": [shell_call("echo one; echo two")]},
        {"text": "Two lines, **done**."},
    ]}],
    "turns": [{"text": "unexpected"}],
}  # fmt: skip


def test_the_console_stays_clean_from_the_first_visit_to_a_run(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    problems = watch(page)
    with start_web(RUN) as stack:
        login = stack.login_url
        page.goto(login.split("/login", 1)[0] + "/")  # a first visit, not logged in
        expect(page.locator("body")).to_contain_text("Not logged in")
        page.wait_for_load_state("load")  # the icon and the stylesheet were asked for
        assert problems == [], problems
        expect(page).to_have_url(login.split("?", 1)[0])
        expect(page.locator("main.login h1")).to_have_css("font-size", "19.2px")  # login.css
        settle(page)
        page.goto(login)
        expect(page.locator("#link")).to_have_text("connected")
        page.get_by_role("button", name="New session").click()
        page.get_by_label("Task").fill("list the files")
        page.get_by_role("button", name="Start session").click()
        timeline = page.locator(".timeline")
        expect(timeline.locator(".tool pre.output")).to_contain_text("two")
        expect(timeline.locator(".assistant").last).to_contain_text("Two lines, done.")
        expect(page.locator("#session-state")).to_have_text("idle")
        settle(page)
        page.get_by_role("link", name="Sessions", exact=True).click()
        expect(page.locator("tr[data-session]").filter(has_text="list the files")).to_have_count(1)
        settle(page)
        page.reload()
        expect(page.locator("#link")).to_have_text("connected")
        expect(page.locator("tr[data-session]")).to_have_count(1)
    assert problems == [], problems


HOSTILE = (
    "| name | note |\n|---|---|\n"
    '| <img src=x onerror="document.body.dataset.pwned=1"> | <script>alert(1)</script> |\n'
    '| [click](javascript:alert(1)) | [ok](https://ok.example/"onmouseover="alert(1)) |\n'
    "| <b>bold</b> | `<i>code</i>` |"
)


def test_markup_in_a_table_stays_text(start_web: Callable[..., TrioThread], page: Page) -> None:
    """Model output is hostile: HTML in a table's cells is shown, never made."""
    problems = watch(page)
    with start_web({"turns": [{"text": HOSTILE}]}) as stack:
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        page.get_by_role("button", name="New session").click()
        page.get_by_label("Task").fill("write a table")
        page.get_by_role("button", name="Start session").click()
        table = page.locator(".timeline .assistant table.md-table").last
        expect(table.locator("tbody tr")).to_have_count(3)
        cells = table.locator("tbody td")
        expect(cells.nth(0)).to_have_text('<img src=x onerror="document.body.dataset.pwned=1">')
        expect(cells.nth(1)).to_have_text("<script>alert(1)</script>")
        expect(cells.nth(2)).to_have_text("[click](javascript:alert(1))")
        expect(cells.nth(4)).to_have_text("<b>bold</b>")
        expect(cells.nth(5).locator("code")).to_have_text("<i>code</i>")
        expect(
            table.locator("img, script, b, i, [onmouseover], a[href^='javascript']")
        ).to_have_count(0)
        (link,) = table.locator("a").all()
        assert link.get_attribute("href") == 'https://ok.example/"onmouseover="alert(1'
        assert page.evaluate("document.body.dataset.pwned") is None
    assert problems == [], problems
