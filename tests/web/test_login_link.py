"""``troupe login-link`` re-issues the web page's one-time login link without a
restart (issue 31, point 10): the running ``troupe serve`` mints it, a real browser
logs in with it once, and the link printed at start stays spent."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import trio
from playwright.sync_api import Browser, Page, expect

from tests.web.conftest import HANG_GUARD, REPO, TrioThread, free_port, start_serve
from tests.web.test_auth import http_get


def login_link(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "actors.cli", "login-link", *args],
        cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=HANG_GUARD / 1000,
    )  # fmt: skip


def fresh_page(browser: Browser) -> Page:
    """A browser profile of its own: no login cookie from another test or link."""
    page = browser.new_context().new_page()
    page.set_default_timeout(HANG_GUARD)
    return page


def test_login_link_mints_a_fresh_one_time_link_from_the_running_server(
    start_web: Callable[..., TrioThread], browser: Browser, tmp_path: Path
) -> None:
    with start_web({"turns": [{"text": "ok"}]}, server=False) as stack:
        assert stack.mock is not None
        data, work, port = tmp_path / "data", tmp_path / "work", free_port()
        process, printed = start_serve(data, work, stack.mock.base_url, port)
        first, second, third = (fresh_page(browser) for _ in range(3))
        try:
            first.goto(printed)
            expect(first.locator("#link")).to_have_text("connected")

            done = login_link("--data-dir", str(data))
            assert done.returncode == 0, done.stderr
            fresh = done.stdout.strip()
            assert fresh.startswith(f"http://127.0.0.1:{port}/login?token="), fresh
            assert fresh != printed and done.stderr == ""

            second.goto(printed)  # the first link stays spent
            expect(second.locator("main.login")).to_contain_text("spent or wrong")
            expect(second.locator("main.login")).to_contain_text("troupe login-link")
            second.goto(fresh)
            expect(second.locator("#link")).to_have_text("connected")
            third.goto(fresh)  # and the new one works once
            expect(third.locator("main.login")).to_contain_text("spent or wrong")

            # Another server by URL, its token from the environment.
            token = (data / "token").read_text().strip()
            env = {**os.environ, "TROUPE_TOKEN": token}
            elsewhere = ("--data-dir", str(tmp_path / "elsewhere"))
            by_url = login_link("--connect", f"ws://127.0.0.1:{port}/", *elsewhere, env=env)
            assert by_url.returncode == 0, by_url.stderr
            assert by_url.stdout.startswith(f"http://127.0.0.1:{port}/login?token=")
            assert by_url.stdout.strip() != fresh

            wrong = login_link("--data-dir", str(data), "--token", "not-the-token")
            assert wrong.returncode == 2
            assert wrong.stderr.strip().splitlines() == [
                f"troupe login-link: the server at ws://127.0.0.1:{port}/ refused the token; "
                "pass --token or set TROUPE_TOKEN (the server keeps it in <data-dir>/token)"
            ]
        finally:
            for page in (first, second, third):
                page.context.close()
            process.kill()
            process.wait(HANG_GUARD / 1000)
        # The server is gone: one line naming what to do, never a traceback.
        gone = login_link("--data-dir", str(data))
        assert gone.returncode == 1 and gone.stdout == ""
        assert gone.stderr.strip().splitlines() == [
            f"troupe login-link: no troupe serve is running for {data}; start one with "
            "`troupe serve` (it prints a link), or pass --connect URL"
        ]


def test_login_link_open_launches_the_browser_on_a_fresh_link(
    start_web: Callable[..., TrioThread], tmp_path: Path
) -> None:
    opened = tmp_path / "opened.txt"
    launcher = tmp_path / "browser.sh"
    launcher.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    launcher.chmod(0o755)
    with start_web({"turns": [{"text": "ok"}]}, server=False) as stack:
        assert stack.mock is not None
        data, work, port = tmp_path / "data", tmp_path / "work", free_port()
        process, printed = start_serve(data, work, stack.mock.base_url, port)
        try:
            env = {**os.environ, "BROWSER": f"{launcher} %s"}
            done = login_link("--data-dir", str(data), "--open", env=env)
            assert done.returncode == 0, done.stderr
            assert "?token=" not in done.stdout  # the opened link is not shown again
            launched = opened.read_text()  # webbrowser waits for a $BROWSER command
            assert launched.startswith(f"http://127.0.0.1:{port}/login?token=")
            assert launched != printed
            # No browser to open it: the link is printed instead, with a note.
            headless = {k: v for k, v in os.environ.items()
                        if k not in ("DISPLAY", "WAYLAND_DISPLAY")}  # fmt: skip
            failing = login_link("--data-dir", str(data), "--open",
                                 env={**headless, "BROWSER": "/bin/false"})  # fmt: skip
            assert failing.returncode == 0, failing.stderr
            assert failing.stdout.startswith(f"http://127.0.0.1:{port}/login?token=")
            assert failing.stderr == "troupe login-link: no browser found; open this link\n"
            for url in (launched, printed):  # a new link leaves the unused ones valid
                target = url.split(str(port), 1)[1]
                status, headers, _ = trio.run(http_get, port, target)
                assert status == 303 and headers["location"] == "/", (url, status)
        finally:
            process.kill()
            process.wait(HANG_GUARD / 1000)
