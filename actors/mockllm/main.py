"""``troupe mock-llm``: run the scripted provider until interrupted, printing its URL.

The arguments are declared in :mod:`actors.cli` so that ``troupe --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys

import msgspec
import trio

from actors.mockllm.replay import Reply, load_replies
from actors.mockllm.script import Script, ScriptError, load_script
from actors.mockllm.server import serve_mock_llm


def _port_in_use(args: argparse.Namespace) -> int:
    """The busy port, named, in one line (exit 1)."""
    print(
        f"troupe mock-llm: {args.host}:{args.port} is already in use; "
        "pass --port N, or --port 0 for a free one",
        file=sys.stderr,
    )
    return 1


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 for a script or recording that cannot be read."""
    try:
        script = load_script(args.script) if args.script else Script()
    except (OSError, ScriptError) as error:
        print(f"troupe mock-llm: {error}", file=sys.stderr)
        return 2
    if args.rounds is not None:
        script = msgspec.structs.replace(script, rounds=args.rounds)
    if getattr(args, "reject_tools", False):
        script = msgspec.structs.replace(script, reject_tools=True)
    if getattr(args, "text_rounds", False):
        script = msgspec.structs.replace(script, text_rounds=True)
    replies: list[Reply] = []
    for path in [*script.replay, *args.replay]:
        try:
            replies.extend(load_replies(path))
        except OSError as error:
            print(f"troupe mock-llm: {error}", file=sys.stderr)
            return 2

    async def main() -> None:
        async with serve_mock_llm(
            script, replies=replies, host=args.host, port=args.port
        ) as server:
            print(server.base_url, flush=True)
            await trio.sleep_forever()

    try:
        with contextlib.suppress(KeyboardInterrupt):
            trio.run(main)
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        return _port_in_use(args)
    except BaseExceptionGroup as group:
        matched, _ = group.split(lambda e: isinstance(e, OSError) and e.errno == errno.EADDRINUSE)
        if matched is None:
            raise
        return _port_in_use(args)
    return 0
