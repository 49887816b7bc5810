"""The web page keeps following a session whose owner is killed (issue 37):
behind a load balancer (a TCP proxy to the first live node), the page loses
its WebSocket, reconnects to the same origin, lands on another node, which
accepts its login cookie (the fleet shares one token), and resumes from its
cursor: the input shows as interrupted, nothing is doubled, and the session
takes a new input from the page, on the node that is left.

It lives with the web tests so that it shares their one Playwright per package: a
second sync Playwright alive in the same thread (a pytest-xdist worker running a
web file, this one, then another web file) makes the next one refuse to start."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import trio
from playwright.sync_api import Browser, expect

from tests.fleet.conftest import RENEW, TOKEN, TTL
from tests.fleet.test_failover import slow_script
from tests.web.conftest import HANG_GUARD, TrioThread, free_port, start_serve
from tests.web.test_resume import open_logged_in, start_session


class Balancer:
    """A TCP proxy in a thread of its own: each connection goes to the first of
    ``ports`` that takes it (a dead node refuses)."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.port = free_port()
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._thread = threading.Thread(target=trio.run, args=(self._main,), daemon=True)

    def __enter__(self) -> Balancer:
        self._thread.start()
        self._ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(30)

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        listeners = await trio.open_tcp_listeners(self.port, host="127.0.0.1")
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, self._handle, listeners)
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    async def _handle(self, client: trio.SocketStream) -> None:
        for port in self.ports:
            try:
                upstream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                continue
            async with client, upstream, trio.open_nursery() as nursery:
                nursery.start_soon(_pump, client, upstream)
                nursery.start_soon(_pump, upstream, client)
            return
        await client.aclose()


async def _pump(source: trio.SocketStream, sink: trio.SocketStream) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while data := await source.receive_some(65536):
            await sink.send_all(data)
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        await sink.send_eof()


def test_the_page_follows_a_session_whose_owner_is_killed(
    start_web: Callable[..., TrioThread], browser: Browser, tmp_path: Path, postgres_url: str
) -> None:
    with start_web({"turns": [{"text": "unused"}]}, server=False) as mock:
        assert mock.mock is not None
        mock.mock.script = slow_script()
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        ports = [free_port(), free_port()]
        processes: list[subprocess.Popen[str]] = []
        with Balancer(ports) as balancer:
            origin = f"http://127.0.0.1:{balancer.port}"
            try:
                logins = []
                for number, port in enumerate(ports, 1):
                    data = tmp_path / f"n{number}"
                    data.mkdir()
                    (data / "token").write_text(TOKEN + "\n")
                    os.chmod(data / "token", 0o600)
                    process, login = start_serve(
                        data, work, mock.mock.base_url, port, "--store", postgres_url,
                        "--node-id", f"n{number}", "--lease-ttl", str(TTL),
                        "--lease-renew", str(RENEW), "--allow-origin", origin,
                    )  # fmt: skip
                    processes.append(process)
                    logins.append(login)
                path = urlsplit(logins[0])  # minted by n1, where the balancer sends it
                page = open_logged_in(browser, f"{origin}{path.path}?{path.query}")
                start_session(page, "a long job")
                expect(page.locator(".timeline .tool pre.output").first).to_contain_text("step 0")
                os.kill(processes[0].pid, signal.SIGKILL)
                processes[0].wait(HANG_GUARD / 1000)
                expect(page.locator("#session-state")).to_have_text("interrupted")
                expect(page.locator("#link")).to_have_text("connected")
                expect(page.locator(".timeline .alert.warn").last).to_contain_text("Interrupted")
                page.get_by_label("Message").fill("go on")
                page.get_by_label("Message").press("Enter")
                expect(page.locator(".timeline .assistant").last).to_contain_text(
                    "Done with this input."
                )
                expect(page.locator(".timeline .user")).to_have_count(2)
                outputs = page.locator(".timeline .tool pre.output").all_inner_texts()
                steps = [text.splitlines()[0] for text in outputs]
                first = steps[: steps.index("step 19") + 1] if "step 19" in steps else steps
                assert len(first) == len(set(first)), steps  # nothing doubled
                page.context.close()
            finally:
                for process in processes:
                    process.kill()
                    process.wait(HANG_GUARD / 1000)
