"""The session list after the server is killed and started again (issue 31, point
4): each stored session keeps its task, model calls, tokens and last update, and a
session ``troupe run --embedded`` made beside the running server is listed too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.web.conftest import HANG_GUARD, REPO, TrioThread, free_port, start_serve


def _row(page: Page, task: str):  # type: ignore[no-untyped-def]
    return page.locator("tr[data-session]").filter(has_text=task)


def test_the_list_is_whole_after_sigkill_and_restart(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    with start_web({"turns": [{"text": "Answered."}], "repeat": True}, server=False) as stack:
        assert stack.mock is not None
        url = stack.mock.base_url
        data, work, port = tmp_path / "data", tmp_path / "work", free_port()
        process, login = start_serve(data, work, url, port)
        try:
            page.goto(login)
            expect(page.locator("#link")).to_have_text("connected")
            page.get_by_role("button", name="New session").click()
            page.get_by_label("Task").fill("remember this task")
            page.get_by_role("button", name="Start session").click()
            expect(page.locator(".timeline .assistant").last).to_contain_text("Answered.")
            page.get_by_role("link", name="Sessions", exact=True).click()
            row = _row(page, "remember this task")
            expect(row.locator("span.state")).to_have_text("idle")
            # Read as the restarted server will be read: a list fetched fresh once the
            # input has ended (one fetched mid-input can miss its last update).
            page.goto(login)
            expect(page.locator("#link")).to_have_text("connected")
            expect(row.locator("td.num").first).to_have_text("1")
            tokens = row.locator("td.num").nth(1).inner_text()
            updated = row.locator("td.when time").get_attribute("datetime")
            assert tokens != "0 / 0"

            os.kill(process.pid, signal.SIGKILL)
            process.wait(HANG_GUARD / 1000)
            process, login = start_serve(data, work, url, port)
            page.goto(login)
            expect(page.locator("#link")).to_have_text("connected")
            row = _row(page, "remember this task")
            expect(row).to_have_count(1)
            expect(row.locator("td.num").first).to_have_text("1")
            expect(row.locator("td.num").nth(1)).to_have_text(tokens)
            expect(row.locator("td.when time")).to_have_attribute("datetime", updated or "")

            # A run embedded in its own process, beside the running server.
            done = subprocess.run(
                [sys.executable, "-m", "actors.cli", "run", "--embedded", "--data-dir",
                 str(data), "--base-url", url, "an embedded task"],
                cwd=work, env={**os.environ, "PYTHONPATH": str(REPO)},
                stdin=subprocess.DEVNULL, capture_output=True, timeout=HANG_GUARD / 1000,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            page.reload()
            expect(page.locator("#link")).to_have_text("connected")
            expect(_row(page, "an embedded task")).to_have_count(1)
            rows = page.locator("tr[data-session] td.task a")
            expect(rows.first).to_have_text("an embedded task")  # newest first
            expect(_row(page, "an embedded task").locator("td.num").first).to_have_text("1")
        finally:
            process.kill()
            process.wait(HANG_GUARD / 1000)
