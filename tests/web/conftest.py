"""Real parts for the web page's tests: the scripted provider and a Troupe server in
a trio thread (so a test can raise an approval the way the server's own tests do),
or ``troupe serve`` as a process (to SIGKILL it), and Debian's chromium driven by
Playwright's sync API (never ``playwright install``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from playwright.sync_api import Browser, Page, expect, sync_playwright

from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.server.models import ModelSettings
from actors.server.server import RunningServer, ServerConfig, run_server
from tests.waiting import TEST_KILL_GRACE

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--no-first-run"]  # fmt: skip
HANG_GUARD = 30_000  # milliseconds, Playwright's unit
REPO = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"


def screenshot_dir(tmp_path: Path) -> Path:
    """Where the session test saves its screenshots: the README's own copies only
    when asked (``TROUPE_UPDATE_SCREENSHOTS=1``), so a test run leaves the tree clean."""
    chosen = DOCS_SCREENSHOTS if os.environ.get("TROUPE_UPDATE_SCREENSHOTS") == "1" else tmp_path
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


expect.set_options(timeout=HANG_GUARD)


class TrioThread:
    """A trio loop in a thread: the mock provider and, optionally, the server."""

    def __init__(self, script: dict[str, Any], data_dir: Path, work: Path, server: bool) -> None:
        self._script = msgspec.convert(script, Script)
        self._data_dir = data_dir
        self._work = work
        self._with_server = server
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self.mock: MockLLMServer | None = None
        self.server: RunningServer | None = None
        self._stop: trio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TrioThread:
        self._thread.start()
        self._ready.wait(60)
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc: object) -> None:
        if self.token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self.token)
        self._thread.join(60)

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as error:  # surfaced to the test by __enter__
            self._error = error
            self._ready.set()

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with serve_mock_llm(self._script) as mock, trio.open_nursery() as nursery:
            self.mock = mock
            if self._with_server:
                config = ServerConfig(
                    data_dir=self._data_dir, port=0, working_dir=self._work,
                    models=ModelSettings("openai", mock.base_url, "test-key"),
                    kill_grace=TEST_KILL_GRACE,
                )  # fmt: skip
                self.server = await nursery.start(run_server, config)
            self._ready.set()
            await self._stop.wait()
            if self.server is not None:
                self.server.stop()

    def call(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Run an async function in the server's loop and wait for its result."""
        assert self.token is not None
        return trio.from_thread.run(function, *args, trio_token=self.token)

    def call_soon(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Future[Any]:
        """Start an async function in the server's loop; its result arrives later."""
        future: Future[Any] = Future()

        def wait() -> None:
            try:
                future.set_result(self.call(function, *args))
            except BaseException as error:
                future.set_exception(error)

        threading.Thread(target=wait, daemon=True).start()
        return future

    @property
    def login_url(self) -> str:
        assert self.server is not None and self.token is not None
        server = self.server
        return trio.from_thread.run_sync(server.login_url, trio_token=self.token)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """One chromium for the web tests, closed when the last of them ends: Playwright's
    sync API marks an asyncio loop as running in this thread while it lives, and a
    later test that runs asyncio itself (tests/embed) must not find it there."""
    assert os.path.exists(CHROMIUM), "install Debian's chromium (.ci/run does)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(HANG_GUARD)
    yield page
    context.close()


@pytest.fixture
def start_web(tmp_path: Path) -> Callable[..., TrioThread]:
    root = Path(os.path.realpath(tmp_path))

    def start(script: dict[str, Any], *, server: bool = True) -> TrioThread:
        work = root / "work"
        work.mkdir(exist_ok=True)
        return TrioThread(script, root / "data", work, server)

    return start


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_serve(
    data_dir: Path,
    work: Path,
    base_url: str,
    port: int,
    *extra: str,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """``troupe serve`` as a process; returns it and the login URL it printed.
    ``extra``: more flags; ``env``: its environment (default this process's)."""
    command = [
        sys.executable, "-m", "actors.cli", "serve", "--port", str(port), "--data-dir",
        str(data_dir), "--workdir", str(work), "--base-url", base_url, "--api-key", "test-key",
        *extra,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    assert process.stdout is not None
    for _ in range(10):
        line = process.stdout.readline()
        if line.startswith("web page (one-time login link): "):
            return process, line.rsplit(" ", 1)[-1].strip()
        assert line, f"troupe serve exited: {process.poll()}"
    raise AssertionError("troupe serve printed no login URL")


def shell_call(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}
