"""``troupe fork SESSION``: a new session that goes on from a point of this one.

``--at SEQ`` names the event (an assistant message, or a user input: the fork
starts just before it); without it the fork takes the whole conversation.
``--worktree DIR`` gives the fork its own copy of the working tree, as it was at
that point, in the new directory DIR. Prints the new session's id.
"""

from __future__ import annotations

import argparse
import os
from typing import cast

import trio

from actors.commands.common import connect_to, read_token, server_url
from actors.commands.errors import EXIT_BAD_INPUT, EXIT_OK, CommandError
from actors.commands.rewind import event_seq
from protocol.wire import Forked, ForkSession


def run(args: argparse.Namespace) -> int:
    args.at = event_seq(args.at, "--at")
    if args.worktree:
        args.worktree = os.path.abspath(os.path.expanduser(args.worktree))
    url = server_url(args)
    if url is None:
        raise CommandError(
            "no server is running here; start one with `troupe serve` or pass --connect URL",
            EXIT_BAD_INPUT,
        )
    return trio.run(_fork, args, url)


async def _fork(args: argparse.Namespace, url: str) -> int:
    worktree = args.worktree or None
    async with connect_to(url, read_token(args)) as client:
        reply = cast(
            Forked,
            await client.request(
                ForkSession, session=args.session, at_seq=args.at, working_dir=worktree
            ),
        )
    new = reply.session.session_id
    where = f" in {reply.working_dir}" if reply.working_dir else ""
    print(new)
    print(
        f"forked {args.session} at {args.at or 'its end'}: {new} has {reply.turns} turns{where} "
        f"(troupe attach {new})",
    )
    return EXIT_OK
