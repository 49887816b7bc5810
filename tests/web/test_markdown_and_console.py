"""The web page renders a Markdown table the model writes as a table, and its
console stays clean while a session runs (issue 31, point 10)."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import ConsoleMessage, Page, expect

from tests.web.conftest import TrioThread

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
