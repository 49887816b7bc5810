"""A command imports what its run uses, nothing more (issue #36): the MCP SDK
(most of a second of import), the server's stack, the web page and the ACP host
are imported when first needed, so ``troupe run -p`` starts quickly.

Each check runs in a fresh interpreter and reads its ``sys.modules``: what a
process imported is a fact, not a timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import trio

from tests.cli.conftest import HANG_GUARD, REPO, Home, mock_llm

NOT_ON_THE_RUN_PATH = ("mcp", "actors.server", "actors.web", "actors.acp")
"""Packages ``import actors.commands.run`` must not import."""

NOT_IN_AN_EMBEDDED_RUN = ("mcp", "mcp_types", "pydantic", "actors.acp", "actors.tools.mcp",
                          "asyncssh", "bashlex", "rich.markdown", "yaml", "actors.web",
                          "actors.server.server", "actors.server.connection",
                          "actors.server.handshake", "trio_websocket", "wsproto",
                          "rich", "click", "pygments", "tomllib", "difflib",
                          "actors.session.text_calls.parser", "h2",
                          "actors.commands.run_direct", "protocol.client_blocking",
                          "protocol.websocket_blocking", "actors.policy.shell",
                          "actors.policy.blocklist", "actors.policy.argv",
                          "actors.policy.command_tables", "actors.policy.shell_parse",
                          "actors.policy.confine", "protocol.client",
                          "actors.server.fleet", "actors.server.inbox", "actors.server.forks",
                          "actors.server.tree_points", "actors.server.reply_history",
                          "actors.tools.apply_patch", "actors.tools.core.patch_files",
                          "actors.tools.cli_tool", "actors.models.client.client",
                          "actors.models.client.generate", "actors.models.client.streaming",
                          "actors.models.client.middleware", "actors.session.text_calls.calling",
                          "actors.session.text_calls.stream",
                          "actors.session.text_calls.prompt", "actors.server.recovery",
                          "actors.server.reopen", "actors.server.client_environment",
                          "actors.server.client_calls", "actors.session.isolation",
                          "actors.session.worktree_git", "actors.commands.render",
                          "actors.commands.render_diff", "actors.server.options",
                          "actors.session.presets", "actors.access.peers",
                          "actors.hooks.runner", "actors.policy.sandbox",
                          "actors.tools.cli_tools")  # fmt: skip
"""What an embedded ``troupe run`` with no MCP server, no SSH host, no tools file,
json output and no shell command does not use: its runtime is answered by calls
(:mod:`actors.commands.local_host`), so the listener, the WebSocket stack and the
web page stay out too; rich only draws on a colour terminal, and httpx's own
command-line client (click, pygments, rich) is never imported; with no config file
TOML's parser is not needed, nor difflib without an edit to show or a typo, nor
the text-call parser (nor the rest of text calling: its prompt, its stream
watch) for a model with native tool calls. HTTP/2's h2 is no
dependency (Hypercorn brings it here): the ``troupe`` script keeps httpcore from
importing it. An embedded run never goes through the blocking client to a server, nor the trio
one (its client is the in-process host's). The policy's
shell analyser is built for the first shell line, and a one-answer run has none.
The fleet's modules (leases, the inbox that forwards to another node) serve a
fleet's node only; forking, rewinding code and a session's detail are requests an
embedded one-shot run never makes. The apply_patch engine waits for a patch, a
CLI tool's class (and the files' reader) for a tools file that declares one. The unified client
(``generate``, its middleware and streaming) is not what a session calls its model
with: a session reads only the client's catalog. Recovery is for a store holding
sessions that were live, a client's environment for an editor serving files, a
subagent's isolation for an isolated subagent. With json output nothing is drawn:
the terminal's renderer is made when first used. The server's options (the model
catalog, the presets) answer a client asking for them, a loop preset a session
created with one, the peer check an approval from a connection; a hook runner
waits for a hook, the sandbox's mounts for the first command."""


def _loaded(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


_PRINT_MODULES = "\nimport json, sys; print(json.dumps([n for n, m in sys.modules.items() if m]))"
"""A module set to None in ``sys.modules`` is one declared absent, not imported."""


def _modules_after(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + _PRINT_MODULES],
        capture_output=True,
        check=True,
        cwd=REPO,
        timeout=HANG_GUARD,
    )
    return json.loads(done.stdout.decode().splitlines()[-1])


def test_importing_the_run_command_leaves_the_server_mcp_web_and_acp_alone() -> None:
    modules = _modules_after("import actors.commands.run")
    assert "actors.commands.run" in modules
    assert _loaded(modules, NOT_ON_THE_RUN_PATH) == []


NOT_BEFORE_A_SESSION = ("httpx", "actors.models.gateway", "actors.session.actor",
                        "actors.session.loop", "actors.hooks", "actors.tools.builtin",
                        "trio_websocket", "wsproto", "importlib.metadata",
                        "actors.server.connection", "webbrowser")  # fmt: skip
"""What the server and ``troupe serve`` do not import until a session's actor or
model gateway starts, or the first WebSocket client connects: the server is
ready (listening, serving pages and readiness checks) without them, and the
``troupe acp`` agent answers its editor's first requests without them."""


def test_the_server_and_the_acp_agent_import_no_session_stack() -> None:
    modules = _modules_after(
        "import actors.commands.serve, actors.server.server, actors.commands.acp_serve"
    )
    assert "actors.server.registry" in modules
    assert _loaded(modules, NOT_BEFORE_A_SESSION) == []


def test_the_parser_alone_imports_no_runtime() -> None:
    """``troupe --help`` and ``--version`` build the parser and stop there: no
    runtime, and no ``dataclasses`` (with ``inspect``, about half of ``--version``'s
    own time in a plain install; the wires' frozen error is imported when raised)."""
    modules = _modules_after("from actors.cli import build_parser; build_parser()")
    assert _loaded(modules, ("trio", "msgspec", "httpx", "actors.commands.run")) == []
    assert _loaded(modules, ("dataclasses", "inspect")) == []
    assert _loaded(modules, ("shutil",)) == []  # the help's width: actors.commands.help_width


def test_the_help_is_as_wide_as_shutil_says() -> None:
    """The width the parser formats to is ``shutil``'s, read without it: from
    ``$COLUMNS``, else 80 where standard output is no terminal."""
    measure = (
        "import shutil; from actors.commands.help_width import terminal_columns; "
        "print(terminal_columns(), shutil.get_terminal_size().columns)"
    )
    for columns in ("57", "0", "wide", None):
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        if columns is not None:
            env["COLUMNS"] = columns
        done = subprocess.run([sys.executable, "-c", measure], capture_output=True, text=True,
                              env=env, cwd=REPO, check=True, timeout=HANG_GUARD)  # fmt: skip
        ours, theirs = done.stdout.split()
        assert ours == theirs, columns
    first_lines = {}
    for columns in ("50", "200"):
        help_text = subprocess.run(
            [sys.executable, "-m", "actors.cli", "run", "--help"], capture_output=True,
            text=True, check=True, cwd=REPO, env={**os.environ, "COLUMNS": columns},
            timeout=HANG_GUARD,
        )  # fmt: skip
        first_lines[columns] = len(help_text.stdout.splitlines()[0])  # the usage, wrapped
    assert first_lines["50"] <= 50 < first_lines["200"]


def test_the_version_is_an_attribute_not_the_installed_metadata() -> None:
    """``troupe --version`` reads ``actors.__version__``: ``importlib.metadata``
    alone would cost more than the rest of the command."""
    modules = _modules_after("from actors.cli import version; print(version())")
    assert _loaded(modules, ("importlib.metadata",)) == []


# The embedded run in a fresh interpreter, through the console script's entry point,
# that on its way out writes the names of the modules it imported to a file (the
# command's own stdout stays its result).
_RUN_AND_RECORD = """
import json, sys
record, sys.argv = sys.argv[1], ["troupe", *sys.argv[2:]]
from actors.console import main
code = main()
with open(record, "w") as out:
    json.dump(sorted(name for name, module in sys.modules.items() if module), out)
sys.exit(code)
"""


async def test_an_embedded_run_imports_no_mcp_acp_ssh_or_markdown(home: Home) -> None:
    record = home.root / "modules.json"
    async with mock_llm({"turns": [{"text": "done"}]}) as mock:
        with trio.fail_after(HANG_GUARD):
            done = await trio.run_process(
                [sys.executable, "-c", _RUN_AND_RECORD, str(record), "run", "--embedded",
                 "--base-url", mock.base_url, "--output-format", "json", "-p", "hi"],
                capture_stdout=True, capture_stderr=True, check=False,
                cwd=home.work, env=home.env,
            )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.decode().splitlines()[-1])["result"] == "done"
    modules = json.loads(await trio.Path(record).read_text())
    assert "actors.session.actor" in modules  # the session did run in this process
    assert _loaded(modules, NOT_IN_AN_EMBEDDED_RUN) == []


def test_the_preset_names_are_the_presets() -> None:
    """``--policy`` is checked against the names alone (the presets import the
    policy engine); the two lists must not drift."""
    from actors.policy.preset_names import PRESET_NAMES, UNSANDBOXED_PRESETS
    from actors.policy.presets import POLICY_PRESETS

    assert set(POLICY_PRESETS) == PRESET_NAMES
    off = {name for name, preset in POLICY_PRESETS.items() if preset.sandbox == "off"}
    assert off == UNSANDBOXED_PRESETS


# The console script's entry point on ``troupe sessions``: the cyclic collector's
# runs from the parser's import until the command's module has its ``run``, and
# the collector's state once the command is done.
_CONSOLE_COLLECTIONS = """
import gc, json, sys
sys.argv = ["troupe", "sessions"]
loading = []
def collected(phase, info):
    command = sys.modules.get("actors.commands.sessions")
    if phase == "start" and "actors.cli" in sys.modules and not hasattr(command, "run"):
        loading.append(info["generation"])
gc.callbacks.append(collected)
from actors.console import main
code = main()
print(json.dumps({"loading": loading, "enabled": gc.isenabled(),
                  "frozen": gc.get_freeze_count() > 0}), file=sys.stderr)
sys.exit(code)
"""


def test_the_console_loads_the_parser_and_the_command_without_collections(home: Home) -> None:
    """Loading makes objects that all live on: the collector is off until the
    command's module is loaded, then what exists is frozen and it is on again."""
    done = subprocess.run(
        [sys.executable, "-c", _CONSOLE_COLLECTIONS], capture_output=True, check=False,
        cwd=home.work, env=home.env, timeout=HANG_GUARD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stderr.decode().splitlines()[-1])
    assert said == {"loading": [], "enabled": True, "frozen": True}
