"""``troupe run "task"``: run one task and show what the agent does.

Exit codes: 0 done, 1 error, 2 bad input, 53 turn limit reached.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio
from trio_websocket import HandshakeError

from actors.commands.common import EXIT_BAD_INPUT, EXIT_ERROR
from actors.commands.interact import Follower
from actors.commands.session_host import open_client
from protocol.client import ConnectionRefused, RequestError
from protocol.session import SessionConfig
from protocol.wire import CreateSession


def run(args: argparse.Namespace) -> int:
    if not args.task.strip():
        print("troupe run: the task is empty", file=sys.stderr)
        return EXIT_BAD_INPUT
    workdir = Path(args.workdir or ".").resolve()
    if not workdir.is_dir():
        print(f"troupe run: {workdir} is not a directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return trio.run(_run, args, workdir)
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace, workdir: Path) -> int:
    config = SessionConfig(max_turns=args.max_turns)
    interactive = args.output_format == "text" and sys.stdin.isatty()
    try:
        async with open_client(args, workdir) as client:
            created = await client.request(
                CreateSession,
                profile=args.profile,
                working_dir=str(workdir) if args.connect else None,
                config=config,
            )
            session = created.session.session_id
            follower = Follower(client, session, args.output_format)
            if args.output_format == "text":
                follower.renderer.note(f"session {session} in {workdir}")
            outcome = await follower.run(args.task, interactive=interactive)
            return outcome.exit_code
    except RequestError as error:
        print(f"troupe run: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT if error.code == "invalid_request" else EXIT_ERROR
    except (ConnectionRefused, HandshakeError, OSError) as error:
        print(f"troupe run: cannot reach the server: {error}", file=sys.stderr)
        return EXIT_ERROR
