"""The ``troupe`` command.

Each subcommand is a host of the runtime; this module only parses arguments and
hands over, so that ``troupe --help`` stays fast and lists what Troupe can do.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata

DISTRIBUTION = "troupe-agents"


def version() -> str:
    """The installed distribution's version (``unknown`` when run from a bare tree)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="troupe",
        description=(
            "Troupe: an actor-based runtime for coding agents. Sessions, subagents and "
            "execution environments (local and SSH) run as supervised trio actors."
        ),
    )
    parser.add_argument("--version", action="version", version=f"troupe {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    mock = commands.add_parser(
        "mock-llm",
        help="run a scripted LLM provider (OpenAI, Anthropic, Gemini wire formats)",
        description="Serve scripted or recorded model answers over HTTP with real SSE; "
        "prints the base URL.",
    )
    mock.add_argument("--script", help="a YAML or JSON script of turns and faults")
    mock.add_argument(
        "--replay",
        action="append",
        default=[],
        metavar="FILE",
        help="serve this recorded response as it is (repeatable, served in order)",
    )
    mock.add_argument("--rounds", type=int, help="answer N tool calls, then text")
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=0, help="0 picks a free port")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "mock-llm":
        from actors.mockllm.main import run

        return run(args)
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
