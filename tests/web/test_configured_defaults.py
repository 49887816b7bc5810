"""A session started from the web page runs on the configured model (issue 31,
point 3): ``troupe serve --model X``, or ``model`` in the user's config file, reach
the model request and the session list, as they do for ``troupe run``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.web.conftest import TrioThread, free_port, start_serve


def _start_from_the_page(page: Page, login: str, task: str) -> None:
    page.goto(login)
    expect(page.locator("#link")).to_have_text("connected")
    page.get_by_role("button", name="New session").click()
    page.get_by_label("Task").fill(task)
    page.get_by_role("button", name="Start session").click()
    expect(page.locator(".timeline .assistant").last).to_contain_text("configured answer")


def _models_asked(stack: TrioThread) -> list[str]:
    assert stack.mock is not None
    return [r.json()["model"] for r in stack.mock.requests if r.method == "POST"]


def test_a_web_session_runs_on_the_served_model(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    with start_web({"turns": [{"text": "configured answer"}]}, server=False) as stack:
        assert stack.mock is not None
        data, work = tmp_path / "data", tmp_path / "work"
        process, login = start_serve(
            data, work, stack.mock.base_url, free_port(), "--model", "served-model-7"
        )
        try:
            _start_from_the_page(page, login, "hello from the page")
            assert _models_asked(stack) == ["served-model-7"]
            page.get_by_role("link", name="Sessions", exact=True).click()
            expect(page.locator("tr[data-session] td.model").first).to_contain_text(
                "served-model-7"
            )
        finally:
            process.kill()
            process.wait(30)


def test_a_web_session_runs_on_the_config_file_model(
    start_web: Callable[..., TrioThread], page: Page, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    (config / "troupe").mkdir(parents=True)
    (config / "troupe" / "config.toml").write_text(
        'model = "file-model-3"\npolicy = "unattended"\n'
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    env.pop("TROUPE_CONFIG", None)
    with start_web({"turns": [{"text": "configured answer"}]}, server=False) as stack:
        assert stack.mock is not None
        data, work = tmp_path / "data", tmp_path / "work"
        process, login = start_serve(data, work, stack.mock.base_url, free_port(), env=env)
        try:
            page.goto(login)
            expect(page.locator("#link")).to_have_text("connected")
            page.get_by_role("button", name="New session").click()
            expect(page.locator("select[name=policy]")).to_have_value("unattended")
            page.get_by_label("Task").fill("hello")
            page.get_by_role("button", name="Start session").click()
            expect(page.locator(".timeline .assistant").last).to_contain_text("configured answer")
            assert _models_asked(stack) == ["file-model-3"]
        finally:
            process.kill()
            process.wait(30)
