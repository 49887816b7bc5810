"""The ``troupe`` command.

Each subcommand is a host of the runtime; this module only parses arguments and
hands over, so that ``troupe --help`` stays fast and lists what Troupe can do. It
is also the command's one error boundary: whatever a subcommand raises ends as one
line on stderr and a documented exit code (:mod:`actors.commands.errors`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any, cast

DEBUG_HELP = "print the traceback of a failure (also TROUPE_DEBUG=1)"
EXIT_CODES = "Exit codes: 0 done, 1 runtime failure, 2 bad input or configuration, 130 interrupted."

ENV_DATA = "TROUPE_DATA_DIR, XDG_DATA_HOME (where the store and the token live)"
ENV_CLIENT = "TROUPE_TOKEN (the server's token)"
ENV_MODELS = (
    "OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID, ANTHROPIC_API_KEY, "
    "ANTHROPIC_BASE_URL, GEMINI_API_KEY (or GOOGLE_API_KEY), GEMINI_BASE_URL"
)
ENV_CONFIG = "TROUPE_CONFIG, XDG_CONFIG_HOME (the user's config file)"
ENV_ALWAYS = "TROUPE_DEBUG=1 (tracebacks), NO_COLOR (plain output)"


def version() -> str:
    """Troupe's version: ``actors.__version__``, the one place it is written (the
    package's metadata is built from it). An attribute, not ``importlib.metadata``,
    which alone would cost ``--version`` more than the rest of the command."""
    from actors import __version__

    return __version__


class _Version(argparse._VersionAction):
    """``--version``, its text made only when asked for."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        self.version = f"troupe {version()}"
        super().__call__(parser, namespace, values, option_string)


class _Unfilled:
    """The arguments of a command that is not being run: taken, and kept nowhere."""

    def __getattr__(self, name: str) -> Any:
        return self._take

    def _take(self, *args: Any, **kwargs: Any) -> Any:
        return self


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The commands. With :attr:`only` set, every command is registered (its name
    and help, for ``troupe --help``), but only those named in it get their
    arguments: a command pays for its own arguments, not for thirty others'
    (about 40 M instructions on every start)."""

    only: Collection[str] | None = None

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if self.only is None or name in self.only or kwargs.get("aliases"):
            return super().add_parser(name, **kwargs)
        # What argparse's add_parser records besides the parser (the name among the
        # choices, the help line of ``troupe --help``), without making the parser: an
        # ArgumentParser with its help option costs about 3 M instructions, and a
        # command not named is never parsed (the command is one of ``only``'s words).
        if name in self._name_parser_map:
            raise argparse.ArgumentError(self, f"conflicting subparser: {name}")
        if "help" in kwargs:
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), kwargs["help"]))
        unfilled = cast(argparse.ArgumentParser, _Unfilled())
        self._name_parser_map[name] = unfilled
        return unfilled


def _environment(*groups: str) -> str:
    lines = "\n".join(f"  {group}" for group in (*groups, ENV_ALWAYS))
    return f"{EXIT_CODES}\n\nEnvironment variables read:\n{lines}"


def _command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    help: str,
    description: str | None = None,
    env: tuple[str, ...] = (),
) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=_environment(*env),
    )
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    return parser


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, the arguments of the commands named
    in it alone (:class:`_Commands`: ``main`` passes its words, among which is the
    command, whichever it is). A "did you mean" still searches every command's."""
    from actors.commands.suggest import SuggestingParser

    parser = SuggestingParser(
        prog="troupe",
        description=(
            "Troupe: an actor-based runtime for coding agents. Sessions, subagents and "
            "execution environments (local and SSH) run as supervised trio actors."
        ),
        epilog=_environment(ENV_DATA, ENV_CLIENT, ENV_MODELS, ENV_CONFIG),
    )
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    _add_interactive(parser)
    commands = cast(
        _Commands, parser.add_subparsers(dest="command", metavar="COMMAND", action=_Commands)
    )
    if only is not None:
        commands.only = only
        parser.complete = build_parser  # what the "did you mean" searches
    _add_run(commands)
    _add_server_commands(commands)
    _add_tools(commands)
    _add_trust(commands)
    from actors.commands.harness_args import add_harness_commands

    add_harness_commands(commands, _command, _data_dir_option, (ENV_DATA, ENV_MODELS, ENV_CONFIG))
    return parser


def _data_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        help="where the store and token live (default $TROUPE_DATA_DIR, "
        "else $XDG_DATA_HOME/troupe or ~/.local/share/troupe)",
    )


def _model_options(parser: argparse.ArgumentParser) -> None:
    """Which model, where: each defaults to the config files, then the environment."""
    from actors import provider_wires as wires  # the wires' names and profiles

    parser.add_argument(
        "--provider",
        choices=wires.profiles(),
        help="the provider profile: its tools and prompts (default openai)",
    )
    parser.add_argument("--profile", dest="provider", help=argparse.SUPPRESS)
    parser.add_argument(
        "--wire",
        metavar=wires.metavar(),
        help="the API format; openai-chat for any OpenAI-compatible server "
        "(Ollama, vLLM, llama.cpp) (default: the provider's own)",
    )
    parser.add_argument("-m", "--model", help="the model name sent to the provider")
    parser.add_argument(
        "--base-url",
        help="the model endpoint (e.g. http://localhost:11434/v1, or a troupe mock-llm URL); "
        "no key is needed for a local server",
    )
    parser.add_argument("--api-key", help="API key (default: the provider's variable)")
    parser.add_argument(
        "--fallback",
        action="append",
        choices=wires.profiles(),
        metavar="PROFILE",
        help="when the model's endpoint fails, go on with this profile's (repeatable)",
    )
    parser.add_argument(
        "--provider-option",
        dest="provider_options",
        action="append",
        metavar="KEY=VALUE",
        help="a field added to each model request's body (repeatable; VALUE is JSON when "
        "it parses, else a string): --provider-option service_tier=flex",
    )


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--connect", metavar="URL", help="a troupe server (ws://...)")
    parser.add_argument("--token", help="the server's token (default: $TROUPE_TOKEN or the file)")


VERBOSE_HELP = "show every diff in full (default: collapsed beyond 40 lines)"


def _resume_options(resume: argparse._MutuallyExclusiveGroup, verb: str) -> None:
    """``--resume SESSION`` or ``-c``: which session to go on with (one or the other)."""
    resume.add_argument("--resume", metavar="SESSION", help=f"{verb} this session")
    resume.add_argument(
        "-c", "--continue", dest="continue_latest", action="store_true",
        help=f"{verb} the latest session of this directory",
    )  # fmt: skip


def _add_interactive(parser: argparse.ArgumentParser) -> None:
    """``troupe`` alone at a terminal: an interactive conversation (these options
    are for it; a script without a terminal gets this help)."""
    group = parser.add_argument_group(
        "interactive conversation (troupe with no command, at a terminal)"
    )
    _resume_options(group.add_mutually_exclusive_group(), "go on with")
    group.add_argument("--workdir", help="where it works (default .)")
    group.add_argument("--policy", metavar="NAME", help="the safety policy (default interactive)")
    group.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    group.add_argument(
        "--embedded", action="store_true", help="run in this process even if a server is running"
    )
    _model_options(group)  # type: ignore[arg-type]
    _data_dir_option(group)  # type: ignore[arg-type]
    _client_options(group)  # type: ignore[arg-type]


def _add_run(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = _command(
        commands,
        "run",
        "run a task and show what the agent does (headless with -p or a pipe)",
        "Run a task on the running local server (troupe serve) if there is one, else in a "
        "runtime embedded in this command. The task is the argument, -p TEXT, or stdin "
        "('-' or a pipe). Lines typed while it works steer it; a line containing 'stop' "
        "interrupts it after the current step; Ctrl-C interrupts it at once (the session "
        "is kept: --resume it). A run that hits --max-turns exits 53.",
        env=(ENV_DATA, ENV_CLIENT, ENV_MODELS, ENV_CONFIG),
    )
    run.add_argument("task", nargs="?", help="what the agent should do ('-' reads stdin)")
    run.add_argument("-p", "--prompt", help="the task, as codex exec / claude -p take it")
    run.add_argument("--workdir", help="where it works (default .)")
    run.add_argument(
        "--ssh-host",
        metavar="NAME",
        help="work on this SSH host: a [ssh_hosts.NAME] of a config file, or ssh://user@host",
    )
    run.add_argument(
        "--environment",
        metavar="KIND:WHAT",
        help="work in another kind of environment: docker:IMAGE runs the session in a "
        "container of IMAGE with the working directory bind-mounted (no network)",
    )
    run.add_argument(
        "--isolation",
        choices=["none", "worktree", "container"],
        help="where subagents work: in this directory (none), in a git worktree each on a "
        "branch named after it, or in a container each with a copy of the workspace",
    )
    _model_options(run)
    run.add_argument("--reasoning-effort", choices=["minimal", "low", "medium", "high"])
    run.add_argument("--max-turns", type=int, help="model turns for the session (0 = unlimited)")
    run.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="wall-clock limit: past it the work is stopped, its commands killed, the "
        "result object printed, and the exit code is 124",
    )
    run.add_argument(
        "--preset",
        help="a loop preset: each seed document's limits, timeouts and loop options "
        "(coding-agent-loop, agent-loop-and-tool-system, agentic-behavior-tool, "
        "forge-agent-loop-prd, adr-040; see docs/presets.md)",
    )
    run.add_argument(
        "--agentic",
        action="store_true",
        default=None,
        help="offer agentic mode: the model may enter an autonomous loop that runs "
        "until it calls complete(result, status) (on in the agentic-behavior-tool preset)",
    )
    run.add_argument(
        "--max-iterations",
        type=int,
        metavar="N",
        help="model calls an agentic loop may make (default 25; 0 = unlimited)",
    )
    run.add_argument(
        "--input-token-budget",
        type=int,
        metavar="N",
        help="tokens one input may spend (input + output as the model reports them); "
        "warned at 80 %%, stopped past it (exit 53)",
    )
    run.add_argument(
        "--session-token-budget", type=int, metavar="N", help="tokens the whole session may spend"
    )
    run.add_argument(
        "--compaction",
        metavar="auto|manual|off",
        help="compact the conversation before it fills the context window (auto, the "
        "default), only on /compact (manual), or never (off)",
    )
    run.add_argument(
        "--context-window",
        type=int,
        metavar="N",
        help="the model's context window in tokens (default: the model catalog's)",
    )
    run.add_argument(
        "--max-cost",
        type=float,
        metavar="DOLLARS",
        help="dollars the session may spend (catalog prices, cache included); warned at "
        "80 %%, stopped past it",
    )
    run.add_argument(
        "--max-input-cost", type=float, metavar="DOLLARS", help="dollars one input may spend"
    )
    run.add_argument(
        "--tool-calling",
        metavar="native|text|auto",
        help="how tools reach the model: the provider's tool calls, a call format in the "
        "system prompt parsed from the answer's text (models or servers without tool "
        "calling), or auto (native, text when the server rejects tools; the default)",
    )
    run.add_argument("--instructions", help="extra system instructions (text, or @FILE)")
    run.add_argument(
        "--policy",
        metavar="NAME",
        help="the safety policy (default interactive: admin commands ask); also "
        "unattended, sandboxed, permissive, agent-loop-and-tool-system, "
        "agentic-behavior-tool, adr-040",
    )
    _sandbox_option(run)
    run.add_argument(
        "--approval",
        choices=["ask", "deny", "allow-workspace", "never-ask"],
        help="what happens to a call the policy would ask about: ask (the default at a "
        "terminal), deny, allow-workspace (file changes inside --workdir go through), "
        "never-ask (all go through; what the policy denies stays denied). When nobody "
        "can answer (stdin not a terminal, -p, json output) an ask is denied at once",
    )
    _resume_options(run.add_mutually_exclusive_group(), "continue")
    run.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    run.add_argument(
        "--input-format",
        choices=["text", "stream-json"],
        default="text",
        help="stream-json: read user messages as JSON lines on stdin; each starts an "
        "input when the session is idle and steers it while it works",
    )
    run.add_argument("-o", "--output-last-message", metavar="FILE",
                     help="write the agent's final message to FILE")  # fmt: skip
    run.add_argument(
        "--embedded", action="store_true", help="run in this process even if a server is running"
    )
    run.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    _data_dir_option(run)
    _client_options(run)


def _add_server_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = _command(
        commands,
        "serve",
        "run the WebSocket server (sessions, environments, durable events)",
        "Serve every actor over one WebSocket protocol; prints the URL and where the token is.",
        env=(ENV_DATA, ENV_MODELS, ENV_CONFIG),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    serve.add_argument("--port", type=int, default=7707, help="0 picks a free port")
    serve.add_argument("--workdir", help="the default environment's directory (default .)")
    serve.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                       help="a browser origin to admit besides its own (repeatable)")  # fmt: skip
    serve.add_argument("--max-frame", type=int, default=4 * 1024 * 1024, help="bytes")
    serve.add_argument("--open", action="store_true", help="open the web page in a browser")
    serve.add_argument("--store", metavar="URL",
                       help="where sessions are kept: sqlite (default: troupe.db in the data "
                            "dir) or postgresql://user@host/db (docs/deploy.md)")  # fmt: skip
    serve.add_argument("--node-id", help="this node's id in a fleet on PostgreSQL "
                       "(default: one made once and kept in the data dir)")  # fmt: skip
    serve.add_argument("--lease-ttl", type=float, metavar="SECONDS",
                       help="a lease lapses this long unrenewed (default 10)")  # fmt: skip
    serve.add_argument("--lease-renew", type=float, metavar="SECONDS",
                       help="how often a node renews its leases (default 3)")  # fmt: skip
    _data_dir_option(serve)
    _model_options(serve)

    login_link = _command(
        commands,
        "login-link",
        "print a fresh one-time login link for the running server's web page",
        "Ask the running troupe serve (of the data dir, or --connect URL) for a new "
        "one-time login link; each link logs in one browser, once.",
        env=(ENV_DATA, ENV_CLIENT),
    )
    login_link.add_argument("--open", action="store_true", help="open it in a browser")
    _data_dir_option(login_link)
    _client_options(login_link)

    attach = _command(
        commands,
        "attach",
        "replay and follow a session on a server; typed lines continue or steer it",
        "Replay a session's events and follow it live. A typed line starts a new input "
        "when the session is idle and steers it while it works; 'stop' interrupts it after "
        "the current step. Ctrl-C detaches (the session keeps running; exit 130).",
        env=(ENV_DATA, ENV_CLIENT),
    )
    attach.add_argument("session", help="a session id or address")
    attach.add_argument("--after-seq", type=int, default=0)
    attach.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    _data_dir_option(attach)
    _client_options(attach)

    sessions = _command(
        commands,
        "sessions",
        "list sessions: task, directory, state, last update (from a server and the store)",
        env=(ENV_DATA, ENV_CLIENT),
    )
    sessions.add_argument("--json", action="store_true", help="one JSON object per line")
    _data_dir_option(sessions)
    _client_options(sessions)

    nodes = _command(
        commands,
        "nodes",
        "list the nodes of a fleet on PostgreSQL, the sessions each owns, and lease ages",
        env=(ENV_CONFIG,),
    )
    nodes.add_argument("--store", metavar="URL", help="the fleet's postgresql:// URL")
    nodes.add_argument("--json", action="store_true", help="one JSON object per line")

    _add_rewind_fork(commands)

    audit = _command(
        commands,
        "audit",
        "print a session's policy decisions and approvals (from the store)",
        "Every tool call's policy decision and every approval asked and answered "
        "(who, when), oldest first.",
        env=(ENV_DATA,),
    )
    audit.add_argument("session", help="a session id or address, or last (the newest started here)")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    _data_dir_option(audit)


def _add_rewind_fork(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rewind = _command(
        commands,
        "rewind",
        "go back to just before an input: the conversation, the code or both",
        "Without --to, list the session's inputs and their seqs. With --to SEQ, rewind "
        "the session on the running server to just before that input: the conversation "
        "(default), the working tree's files from the snapshot taken then (--code), or "
        "both (--both). Refused while the session is processing an input.",
        env=(ENV_DATA, ENV_CLIENT),
    )
    rewind.add_argument("session", help="a session id or address")
    rewind.add_argument("--to", metavar="SEQ", help="the input's seq (see the list)")
    mode = rewind.add_mutually_exclusive_group()
    for flag, what in (("code", "the files"), ("conversation", "the conversation (default)"),
                       ("both", "the files and the conversation")):  # fmt: skip
        mode.add_argument(f"--{flag}", dest="mode", action="store_const", const=flag, help=what)
    rewind.set_defaults(mode="conversation")
    rewind.add_argument(
        "--summarize", nargs="?", const="", metavar="INSTRUCTIONS",
        help="replace the cut part with a summary (INSTRUCTIONS steer it)",
    )  # fmt: skip
    _data_dir_option(rewind)
    _client_options(rewind)

    fork = _command(
        commands,
        "fork",
        "start a new session from a point of another one's conversation",
        "A new session whose conversation is SESSION's up to the event --at SEQ (an "
        "assistant message; a user input: up to just before it; default: all of it). "
        "--worktree DIR gives it its own copy of the working tree as it was then.",
        env=(ENV_DATA, ENV_CLIENT),
    )
    fork.add_argument("session", help="a session id or address")
    fork.add_argument("--at", metavar="SEQ", help="the event to fork at")
    fork.add_argument("--worktree", metavar="DIR", help="a new directory for its own tree")
    _data_dir_option(fork)
    _client_options(fork)


def _add_trust(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    trust = _command(
        commands,
        "trust",
        "let a project's .troupe/ settings that run code or send credentials take effect",
        "Trust DIR (default: the project around .): its MCP servers, base_url and other "
        "endpoints, SSH hosts and .troupe/tools.yaml take effect. Until then they are "
        "ignored with one line. The list is kept in $XDG_CONFIG_HOME/troupe.",
        env=(ENV_CONFIG,),
    )
    trust.add_argument("directory", nargs="?", metavar="DIR")
    trust.add_argument("--list", action="store_true", help="print the trusted directories")
    trust.add_argument("--revoke", action="store_true", help="stop trusting DIR")


def _add_tools(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mock = _command(
        commands,
        "mock-llm",
        "run a scripted LLM provider (OpenAI, Anthropic, Gemini wire formats)",
        "Serve scripted or recorded model answers over HTTP with real SSE; prints the base "
        "URL. The script format: docs/mock-llm.md.",
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
    mock.add_argument(
        "--reject-tools",
        action="store_true",
        help="refuse requests that carry tools (a server without native tool calling)",
    )
    mock.add_argument(
        "--text-rounds",
        action="store_true",
        help="with --rounds: write each call as text when a request carries no tools",
    )
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=0, help="0 picks a free port")

    demo = _command(
        commands,
        "demo",
        "a parent session and three parallel subagents doing real work (no API key)",
    )
    demo.add_argument(
        "--pace", type=float, default=0.6, help="seconds the scripted model takes per answer"
    )
    _command(commands, "schema", "print the JSON Schema of the WebSocket protocol")

    smoke = _command(
        commands,
        "smoke",
        "the spec's integration smoke test against real providers (pass/fail table)",
        "Run the seven steps of the coding-agent-loop spec's smoke test (file creation, "
        "read and edit, shell, truncation of a 100k-character file, steering, a subagent, "
        "a timeout) in a temporary directory, once per provider whose key is set (or "
        "--provider), and print a pass/fail table and the tokens used. Real providers "
        "cost money: a run is a few dozen model calls.",
        env=(ENV_MODELS, ENV_CONFIG),
    )
    from actors import provider_wires as wires  # the wires' names and profiles

    smoke.add_argument(
        "--provider", choices=[*wires.profiles(), "all"],
        help="default: every provider whose key is set",
    )  # fmt: skip
    smoke.add_argument("--wire", metavar=wires.metavar())
    smoke.add_argument("-m", "--model", help="the model name sent to the provider")
    smoke.add_argument("--base-url", help="the model endpoint (e.g. a troupe mock-llm URL)")
    smoke.add_argument("--api-key", help="API key (default: the provider's variable)")
    smoke.add_argument("--step-timeout", type=float, default=300.0, help="seconds per step")

    config = _command(
        commands,
        "config",
        "show the effective settings and where each came from",
        "Show provider, wire, model, base URL and the other defaults as `troupe run` would "
        "use them: flags win, then .troupe/config.toml (in this directory or above), then "
        "~/.config/troupe/config.toml, then the environment. Give run's flags to see their "
        "effect. The format: docs/cli.md.",
        env=(ENV_CONFIG, ENV_MODELS),
    )
    _model_options(config)
    config.add_argument("--reasoning-effort")
    config.add_argument("--max-turns", type=int)
    config.add_argument("--instructions")
    config.add_argument("--connect", metavar="URL")
    config.add_argument("--workdir", help="the project directory (default .)")
    config.add_argument("--json", action="store_true", help="as one JSON object")
    config.add_argument("--policy", metavar="NAME", help="show the sandbox of this policy")
    _sandbox_option(config)

    acp = commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol on stdin/stdout (for editors such as Zed)",
    )
    _data_dir_option(acp)
    _model_options(acp)
    _client_options(acp)


def main(argv: Sequence[str] | None = None, loaded: Callable[[], None] | None = None) -> int:
    """Parse, hand over, and be the one place where failures become one line.
    ``loaded``: called once the command's module is imported, before it runs."""
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(only=frozenset(words))  # the command is one of its words
        args = parser.parse_args(words)
    except KeyboardInterrupt:  # Ctrl-C while starting: one line, as later
        print("troupe: interrupted", file=sys.stderr)
        return 130
    if args.command is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):  # a script: the help, as ever
            parser.print_help()
            return 0
        args.command = "interactive"
    try:
        return _dispatch(args, loaded)
    except BaseException as error:  # the boundary: one line, the documented exit code
        if isinstance(error, SystemExit):
            raise
        from actors.commands.errors import report

        return report(args.command, error, getattr(args, "debug", False))


def _sandbox_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=["auto", "on", "off"],
        help="the OS sandbox for commands (default from the policy: auto, which confines "
        "them where bubblewrap works and warns once where it does not; on refuses them "
        "there; off runs them unconfined)",
    )


ELSEWHERE = {"mock-llm": "actors.mockllm.main"}
"""Commands whose ``run`` is not in :mod:`actors.commands`: the scripted provider's,
found by name like every command, so that no product module imports it (it is a
tool for tests, benchmarks and the demo; tests/test_layers.py holds the rule)."""


def _dispatch(args: argparse.Namespace, loaded: Callable[[], None] | None = None) -> int:
    from importlib import import_module

    name = ELSEWHERE.get(args.command, f"actors.commands.{args.command.replace('-', '_')}")
    command = import_module(name)
    if loaded is not None:
        loaded()
    return int(command.run(args))


if __name__ == "__main__":
    sys.exit(main())
