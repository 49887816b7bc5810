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
    _add_server_commands(commands)
    return parser


def _data_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        help="where the store and token live (default $TROUPE_DATA_DIR, "
        "else $XDG_DATA_HOME/troupe or ~/.local/share/troupe)",
    )


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="openai", choices=["openai", "anthropic", "gemini"])
    parser.add_argument(
        "--base-url", help="the model endpoint for every profile (e.g. a troupe mock-llm URL)"
    )
    parser.add_argument("--api-key", help="API key (default: the provider's variable)")


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--connect", metavar="URL", help="a troupe server (ws://...)")
    parser.add_argument("--token", help="the server's token (default: $TROUPE_TOKEN or the file)")


def _add_server_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = commands.add_parser(
        "serve",
        help="run the WebSocket server (sessions, environments, durable events)",
        description="Serve every actor over one WebSocket protocol; prints the URL and "
        "where the token is.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    serve.add_argument("--port", type=int, default=7707, help="0 picks a free port")
    serve.add_argument("--workdir", help="the default environment's directory (default .)")
    serve.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                       help="a browser origin to admit besides loopback (repeatable)")  # fmt: skip
    serve.add_argument("--max-frame", type=int, default=4 * 1024 * 1024, help="bytes")
    _data_dir_option(serve)
    _model_options(serve)

    run = commands.add_parser(
        "run",
        help="run one task and show what the agent does",
        description="Run a task in an embedded runtime (or on a server with --connect). "
        "Lines typed while it works steer it; a line containing 'stop' interrupts it after "
        "the current step. Exit codes: 0 done, 1 error, 2 bad input, 53 turn limit.",
    )
    run.add_argument("task", help="what the agent should do")
    run.add_argument("--workdir", help="where it works (default .)")
    run.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    run.add_argument("--max-turns", type=int, default=0, help="0 = unlimited")
    _data_dir_option(run)
    _model_options(run)
    _client_options(run)

    attach = commands.add_parser(
        "attach",
        help="replay and follow a session on a server; typed lines steer it",
    )
    attach.add_argument("session", help="a session id or address")
    attach.add_argument("--after-seq", type=int, default=0)
    _data_dir_option(attach)
    _client_options(attach)

    sessions = commands.add_parser("sessions", help="list sessions (from a server, or the store)")
    sessions.add_argument("--json", action="store_true", help="one JSON object per line")
    _data_dir_option(sessions)
    _client_options(sessions)

    demo = commands.add_parser(
        "demo",
        help="a parent session and three parallel subagents doing real work (no API key)",
    )
    demo.add_argument(
        "--pace", type=float, default=0.6, help="seconds the scripted model takes per answer"
    )

    commands.add_parser("schema", help="print the JSON Schema of the WebSocket protocol")

    acp = commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol on stdin/stdout (for editors such as Zed)",
    )
    _data_dir_option(acp)
    _model_options(acp)
    _client_options(acp)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "mock-llm":
        from actors.mockllm.main import run

        return run(args)
    if args.command in ("serve", "run", "attach", "sessions", "demo", "schema", "acp"):
        from importlib import import_module

        command = import_module(f"actors.commands.{args.command}")
        return command.run(args)
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
