"""``troupe attach SESSION``: replay a session on a server and follow it live.

A typed line starts a new input when the session is idle and steers it while it
works; "stop" interrupts it after the current step; open approval requests are
answered yes, always, no or a reason. Ends when the session ends; Ctrl-C detaches
(exit 130) and never cancels the session.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from typing import cast

import trio

from actors.commands.common import connect_to, read_token, server_url
from actors.commands.errors import (
    EXIT_BAD_INPUT,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
)
from actors.commands.interact import Follower
from actors.commands.tally import Outcome
from protocol.wire import Event, GetSession, SessionDetail


def run(args: argparse.Namespace) -> int:
    url = server_url(args)
    if url is None:
        raise CommandError(
            "no server is running here; start one with `troupe serve` or pass --connect URL",
            EXIT_BAD_INPUT,
        )
    return trio.run(_attach, args, url)


RECONNECT_FOR = 60.0
"""Seconds ``attach`` keeps trying to reconnect once its connection is lost (its
server restarting, or a fleet node gone behind a load balancer: another node
answers the same URL)."""


RECONNECT_WAIT = 10.0
"""Seconds one attempt to reconnect may take (a node that is going away may still
take the connection and never answer it)."""


class _Resuming(Follower):
    """A follower that remembers the last event it showed, to resume after it."""

    cursor = 0

    def take(self, event: Event) -> bool:
        if event.seq > self.cursor and self.session in (event.session, event.session_id):
            self.cursor = event.seq
        return super().take(event)


async def _attach(args: argparse.Namespace, url: str) -> int:
    """Follow the session; when the connection is lost (its node died), connect
    again (the same URL: a fleet's load balancer sends it to a live node) and
    resume after the last event shown: nothing shown twice, nothing missed."""
    cursor = args.after_seq
    lost_at: float | None = None
    while True:
        try:
            detached, outcome, cursor = await _follow_once(args, url, cursor, lost_at is not None)
        except (CommandError, trio.TooSlowError):
            if lost_at is None or trio.current_time() - lost_at > RECONNECT_FOR:
                raise
            await trio.sleep(0.2)
            continue
        if detached or outcome.status != "disconnected":
            break
        lost_at = trio.current_time()  # each loss gets its own window to reconnect in
        print(
            f"troupe attach: lost the connection to {url}; reconnecting (the session goes on)",
            file=sys.stderr, flush=True,
        )  # fmt: skip
    if detached:
        raise CommandError(
            f"detached; session {args.session} keeps running (troupe attach {args.session})",
            EXIT_INTERRUPTED,
        )
    return EXIT_OK if outcome.status in ("closed", "done", "stopped") else EXIT_ERROR


async def _follow_once(
    args: argparse.Namespace, url: str, cursor: int, again: bool
) -> tuple[bool, Outcome, int]:
    detached = False
    result: tuple[Outcome, int] | None = None
    # A reconnection has a deadline until the session answers (then none).
    waiting = trio.CancelScope(deadline=trio.current_time() + RECONNECT_WAIT if again else math.inf)
    with waiting, trio.open_signal_receiver(signal.SIGINT) as signals:
        async with connect_to(url, read_token(args)) as client:
            detail = cast(SessionDetail, await client.request(GetSession, session=args.session))
            waiting.deadline = math.inf
            follower = _Resuming(client, args.session, "text", until=("session_end",))
            follower.cursor = cursor
            follower.renderer.verbose = bool(getattr(args, "verbose", False))
            follower.state = detail.session.state
            follower.known_until = max(cursor, detail.session.last_seq)

            async def on_interrupt() -> None:
                nonlocal detached
                async for _ in signals:
                    detached = True
                    follower.finish()
                    return

            async with trio.open_nursery() as nursery:
                nursery.start_soon(on_interrupt)
                verb = "steer" if follower.state == "processing" else "continue"
                if not again:
                    follower.renderer.note(
                        f"attached to {args.session} on {url}: type to {verb} it (Ctrl-C detaches)"
                    )
                outcome = await follower.run(None, after_seq=cursor, interactive=sys.stdin.isatty())
                result = outcome, follower.cursor
                nursery.cancel_scope.cancel()
    if waiting.cancelled_caught:
        raise trio.TooSlowError
    assert result is not None  # the block ran to its end, or raised
    return detached, *result
