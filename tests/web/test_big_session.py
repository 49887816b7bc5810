"""A page open on a session with 10,000 events stays responsive: a steer typed while
it replays them is sent within a generous guard (the figure is in bench/web_page.py)."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.web.big_session import CALLS_PER_TURN, big_script, fill_session, steer_latency_ms
from tests.web.conftest import TrioThread

EVENTS = 10_000
TURNS = EVENTS // (2 * CALLS_PER_TURN + 2) + 1
GUARD_MS = 5_000


def test_a_steer_typed_on_a_10000_event_session_is_sent(
    start_web: Callable[..., TrioThread], page: Page
) -> None:
    with start_web(big_script(TURNS)) as stack:
        session = fill_session(stack, EVENTS)
        page.goto(stack.login_url)
        expect(page.locator("#link")).to_have_text("connected")
        base = page.url.split("#")[0]
        latency = steer_latency_ms(page, base, session)
        assert 0 <= latency < GUARD_MS, latency
        # Everything arrived, once: every read_file call, and the steer itself.
        tools = page.locator(".timeline .tool")
        expect(tools).to_have_count(TURNS * CALLS_PER_TURN + 1, timeout=120_000)
        expect(page.locator(".timeline .steer")).to_contain_text("stop reading, summarise")
