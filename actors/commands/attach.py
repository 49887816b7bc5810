"""``troupe attach SESSION``: replay a session on a server and follow it live.

A typed line starts a new input when the session is idle and steers it while it
works; "stop" interrupts it after the current step; open approval requests are
answered yes, always, no or a reason. Ends when the session ends; Ctrl-C detaches
(exit 130) and never cancels the session.
"""

from __future__ import annotations

import argparse
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
from protocol.wire import GetSession, SessionDetail


def run(args: argparse.Namespace) -> int:
    url = server_url(args)
    if url is None:
        raise CommandError(
            "no server is running here; start one with `troupe serve` or pass --connect URL",
            EXIT_BAD_INPUT,
        )
    return trio.run(_attach, args, url)


async def _attach(args: argparse.Namespace, url: str) -> int:
    detached = False
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        async with connect_to(url, read_token(args)) as client:
            detail = cast(SessionDetail, await client.request(GetSession, session=args.session))
            follower = Follower(client, args.session, "text", until=("session_end",))
            follower.renderer.verbose = bool(getattr(args, "verbose", False))
            follower.state = detail.session.state
            follower.known_until = detail.session.last_seq

            async def on_interrupt() -> None:
                nonlocal detached
                async for _ in signals:
                    detached = True
                    follower.finish()
                    return

            async with trio.open_nursery() as nursery:
                nursery.start_soon(on_interrupt)
                verb = "steer" if follower.state == "processing" else "continue"
                follower.renderer.note(
                    f"attached to {args.session} on {url}: type to {verb} it (Ctrl-C detaches)"
                )
                outcome = await follower.run(
                    None, after_seq=args.after_seq, interactive=sys.stdin.isatty()
                )
                nursery.cancel_scope.cancel()
    if detached:
        raise CommandError(
            f"detached; session {args.session} keeps running (troupe attach {args.session})",
            EXIT_INTERRUPTED,
        )
    if outcome.status == "disconnected":
        raise CommandError(f"lost the connection to the server at {url}", EXIT_ERROR)
    return EXIT_OK if outcome.status in ("closed", "done", "stopped") else EXIT_ERROR
