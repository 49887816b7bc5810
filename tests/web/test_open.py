"""``troupe serve --open`` opens the page: the browser launched (``$BROWSER``, here a
script that records its argument) gets its own one-time login link, and the link
printed on the terminal still logs in too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import trio

from tests.web.conftest import HANG_GUARD, REPO, TrioThread, free_port
from tests.web.test_auth import http_get


def test_serve_open_launches_the_browser_on_its_own_login_link(
    start_web: Callable[..., TrioThread], tmp_path: Path
) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    script = f'printf "%s" "$1" > {opened}.part && mv {opened}.part {opened}'
    browser.write_text(f"#!/bin/sh\n{script}\n")
    browser.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    port = free_port()
    with start_web({"turns": [{"text": "ok"}]}, server=False) as mock:
        assert mock.mock is not None
        command = [
            sys.executable, "-m", "actors.cli", "serve", "--open", "--port", str(port),
            "--data-dir", str(tmp_path / "data"), "--workdir", str(work),
            "--base-url", mock.mock.base_url, "--api-key", "test-key",
        ]  # fmt: skip
        env = {**os.environ, "BROWSER": f"{browser} %s"}
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
        try:
            assert process.stdout is not None
            printed = ""
            for _ in range(10):
                line = process.stdout.readline()
                if "login" in line:
                    printed = line.rsplit(" ", 1)[-1].strip()
                    break
            assert printed.startswith(f"http://127.0.0.1:{port}/login?token="), printed
            deadline = time.monotonic() + HANG_GUARD / 1000
            while not opened.exists():
                assert time.monotonic() < deadline, "the browser was never launched"
                time.sleep(0.05)
            launched = opened.read_text()
            assert launched.startswith(f"http://127.0.0.1:{port}/login?token=")
            assert launched != printed
            for url in (launched, printed):
                target = url.split(str(port), 1)[1]
                status, headers, _ = trio.run(http_get, port, target)
                assert status == 303 and headers["location"] == "/", (url, status)
        finally:
            process.kill()
            process.wait(HANG_GUARD / 1000)
