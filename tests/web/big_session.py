"""A session with thousands of events, and the time the page takes to send a steer
typed while it replays them (shared by the test and ``bench/web_page.py``)."""

from __future__ import annotations

from typing import Any

import trio
from playwright.sync_api import Page

from protocol.client import connect
from protocol.wire import CreateSession, SubmitInput
from tests.web.conftest import TrioThread, shell_call

CALLS_PER_TURN = 50
BIG_TASK = "read the note many times"


def big_script(turns: int) -> dict[str, Any]:
    """``turns`` model answers of 50 ``read_file`` calls each (102 durable events a
    turn), then a long command so the session is busy when the page opens."""
    read = {"name": "read_file", "arguments": {"file_path": "note.txt"}}
    sleep = shell_call("sleep 120")
    busy = [{"tool_calls": [read] * CALLS_PER_TURN} for _ in range(turns)]
    return {
        "conversations": [{"match": BIG_TASK, "turns": [*busy, {"tool_calls": [sleep]}]}],
        "turns": [{"text": "Nothing to do."}],
    }


def fill_session(stack: TrioThread, events: int, task: str = BIG_TASK) -> str:
    """Start a session on ``task`` and wait until it has ``events`` events."""
    assert stack.server is not None
    server = stack.server
    (server.config.working_dir / "note.txt").write_text("a short note\n")

    async def start() -> str:
        async with connect(server.url, server.token) as client:
            session = (await client.request(CreateSession)).session.session_id
            await client.request(SubmitInput, session=session, text=task)
        record = server.registry.record(session)
        # Polling, not an event: the registry offers no "seq reached" signal.
        with trio.fail_after(600):
            while record.last_seq < events:  # noqa: ASYNC110
                await trio.sleep(0.2)
        return session

    return stack.call(start)


HOOK = """
window.__steer = { typed: 0, sent: 0 };
addEventListener("keydown", (e) => {
  if (e.key === "Enter" && e.target.id === "composer-text") window.__steer.typed = e.timeStamp;
}, true);
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  if (typeof data === "string" && /"type":"(steer|submit)"/.test(data) && !window.__steer.sent) {
    window.__steer.sent = performance.now();
  }
  return send.call(this, data);
};
"""


def steer_latency_ms(page: Page, base_url: str, session: str) -> float:
    """Open the session, type a steer at once (while the replay is applied), and
    return the milliseconds from the key press to the frame leaving the page."""
    page.add_init_script(HOOK)
    page.goto(f"{base_url}#/s/{session}")
    page.reload()  # a fresh document, with the hook and nothing replayed yet
    for _ in range(6000):  # type once the replay has begun to arrive
        if page.evaluate("document.querySelectorAll('.timeline > li').length > 0"):
            break
        page.wait_for_timeout(5)
    composer = page.locator("#composer-text")
    composer.fill("stop reading, summarise")
    composer.press("Enter")
    # Polled with evaluate: the page's CSP forbids the eval wait_for_function uses.
    for _ in range(6000):
        if page.evaluate("window.__steer.sent > 0"):
            return page.evaluate("window.__steer.sent - window.__steer.typed")
        page.wait_for_timeout(20)
    raise AssertionError("the steer was never sent")
