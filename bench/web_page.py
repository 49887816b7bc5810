"""Web page benchmark: how long a steer typed on a big session takes to leave the
page, against the same on a fresh session, in Debian's chromium.

    python bench/web_page.py          # a table
    python bench/web_page.py --json   # one JSON object
    python bench/web_page.py --quick  # 2,000 events instead of 10,000

The page is opened (reloaded) on the session and the steer is typed at once, while
the page applies the replay; the time is from the key press (the event's own
timestamp) to the WebSocket frame. Both sides alternate (ABBA) after a warm-up.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures
from tests.web.big_session import CALLS_PER_TURN, big_script, fill_session, steer_latency_ms
from tests.web.conftest import CHROMIUM, CHROMIUM_FLAGS, TrioThread


def main() -> None:
    args = parse_args(__doc__ or "")
    events = 2_000 if args.quick else 10_000
    repeats = 2 if args.quick else 4
    turns = events // (2 * CALLS_PER_TURN + 2) + 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        (root / "work").mkdir()
        with TrioThread(big_script(turns), root / "data", root / "work", True) as stack, \
                sync_playwright() as playwright:  # fmt: skip
            big = fill_session(stack, events)
            small = fill_session(stack, 3, task="say hello")
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            context = browser.new_context()
            page = context.new_page()
            page.set_default_timeout(120_000)
            page.goto(stack.login_url)
            base = page.url.split("#")[0]

            def side(session: str):
                def run() -> float:
                    fresh = context.new_page()
                    fresh.set_default_timeout(120_000)
                    try:
                        return steer_latency_ms(fresh, base, session)
                    finally:
                        fresh.close()

                return run

            samples = compare({"big": side(big), "fresh": side(small)}, repeats)
            browser.close()
    figures = [
        Figure("events", "events in the big session", events, ""),
        Figure("repeats", "repeats per side (alternating, after a warm-up)", repeats, ""),
        *sample_figures("steer_big_ms", "steer sent, big session", samples["big"], "ms"),
        *sample_figures("steer_fresh_ms", "steer sent, fresh session", samples["fresh"], "ms"),
        *sample_figures("ratio", "big / fresh", ratios(samples["big"], samples["fresh"]), "x"),
    ]
    emit("Troupe web page", figures, args.json)


if __name__ == "__main__":
    main()
