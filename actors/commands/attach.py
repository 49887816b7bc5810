"""``troupe attach SESSION``: replay a session on a server and follow it live.

Typed lines steer it, "stop" interrupts it after the current step, and open
approval requests are answered yes/no. Ends when the session ends (or Ctrl-C;
detaching never cancels the session).
"""

from __future__ import annotations

import argparse
import sys

import trio
from trio_websocket import HandshakeError

from actors.commands.common import EXIT_ERROR, EXIT_OK, read_token, server_url
from actors.commands.interact import Follower
from protocol.client import ConnectionRefused, RequestError, connect


def run(args: argparse.Namespace) -> int:
    url = server_url(args)
    if url is None:
        print("troupe attach: no server known; pass --connect URL", file=sys.stderr)
        return EXIT_ERROR
    try:
        return trio.run(_attach, args, url)
    except KeyboardInterrupt:
        return EXIT_OK


async def _attach(args: argparse.Namespace, url: str) -> int:
    try:
        async with connect(url, read_token(args)) as client:
            follower = Follower(client, args.session, "text", until=("session_end",))
            follower.renderer.note(f"attached to {args.session} on {url} (Ctrl-C detaches)")
            outcome = await follower.run(
                None, after_seq=args.after_seq, interactive=sys.stdin.isatty()
            )
            return EXIT_OK if outcome.status in ("closed", "done", "stopped") else EXIT_ERROR
    except RequestError as error:
        print(f"troupe attach: {error}", file=sys.stderr)
        return EXIT_ERROR
    except (ConnectionRefused, HandshakeError, OSError) as error:
        print(f"troupe attach: cannot reach {url}: {error}", file=sys.stderr)
        return EXIT_ERROR
