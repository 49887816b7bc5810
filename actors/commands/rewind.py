"""``troupe rewind SESSION``: list a session's inputs, or go back to just before one.

Without ``--to`` it lists the session's user inputs (the seq to give ``--to``, and
the input's first line); with it, it rewinds the conversation (the default), the
code (``--code``) or both (``--both``) on the running server, and says what
changed. A session that is processing an input is refused: interrupt it first.
"""

from __future__ import annotations

import argparse
from typing import cast

import trio

from actors.commands.common import connect_to, read_token, server_url
from actors.commands.errors import EXIT_BAD_INPUT, EXIT_OK, CommandError
from protocol.session import RewindOutcome, UserTurn
from protocol.wire import GetSession, RewindSession, Rewound, SessionDetail

SHOWN_CHARS = 72


def event_seq(value: str | None, flag: str) -> int | None:
    """A ``--to``/``--at`` value as a seq (checked here, so a script's unexpanded
    variable gets a line that says what is wanted)."""
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise CommandError(f"{flag} takes an event's seq, a positive number (not {value!r})",
                           EXIT_BAD_INPUT)  # fmt: skip
    return int(value)


def run(args: argparse.Namespace) -> int:
    args.to = event_seq(args.to, "--to")
    url = server_url(args)
    if url is None:
        raise CommandError(
            "no server is running here; start one with `troupe serve` or pass --connect URL",
            EXIT_BAD_INPUT,
        )
    return trio.run(_rewind, args, url)


def one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= SHOWN_CHARS else first[: SHOWN_CHARS - 1] + "…"


def input_lines(detail: SessionDetail) -> list[str]:
    """``SEQ  text`` for each user input of the conversation, oldest first."""
    return [
        f"{turn.seq:>6}  {one_line(turn.content)}"
        for turn in detail.history
        if isinstance(turn, UserTurn) and turn.seq > 0
    ]


def describe(session: str, outcome: RewindOutcome) -> str:
    """One line: what the rewind did."""
    parts = [f"rewound {session} to before input {outcome.to_seq} ({one_line(outcome.text)!r})"]
    if outcome.mode != "code":
        summary = ", a summary stands for the rest" if outcome.summarized else ""
        parts.append(f"conversation {outcome.turns_before} -> {outcome.turns_after} turns{summary}")
    if outcome.snapshot is not None:
        parts.append(
            f"files: {len(outcome.changed)} changed, {len(outcome.recreated)} recreated, "
            f"{len(outcome.deleted)} deleted (undo: snapshot {outcome.undo_snapshot})"
        )
    return "; ".join(parts)


async def _rewind(args: argparse.Namespace, url: str) -> int:
    async with connect_to(url, read_token(args)) as client:
        if args.to is None:
            detail = cast(SessionDetail, await client.request(GetSession, session=args.session))
            lines = input_lines(detail)
            if not lines:
                print(f"session {args.session} has no input to rewind to")
            else:
                print(f"inputs of {args.session} (troupe rewind {args.session} --to SEQ):")
                print("\n".join(lines))
            return EXIT_OK
        reply = cast(
            Rewound,
            await client.request(
                RewindSession,
                session=args.session,
                to_seq=args.to,
                mode=args.mode,
                summarize=args.summarize is not None,
                instructions=args.summarize or None,
            ),
        )
        print(describe(args.session, reply.outcome))
    return EXIT_OK
