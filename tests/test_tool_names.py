"""A tool declares its facts where it is defined (issue 32): no module outside a
tool's definition names that tool, so nothing keyed by a tool's name can fall
behind when a tool is added. Checked over the source: every string constant in
``actors``, ``environments`` and ``protocol`` that equals the name of one of
Troupe's own tools must sit in the module that defines that tool, or in one of
the few places listed below, each with its reason. Docstrings and ``__all__``
do not count (prose, and Python names)."""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from actors.session.profiles import PROFILES
from actors.skills.catalog import SkillCatalog
from actors.skills.tool import SKILL_TOOL, skill_tool
from actors.tools.builtin import BUILTIN_TOOLS
from actors.tools.tool import Tool

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("actors", "environments", "protocol")

ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "actors/acp/agent.py": (frozenset({"terminal"}), "ACP's own word: a terminal content block"),
    "actors/acp/client_files.py": (
        frozenset({"terminal"}),
        "ACP's own word: the editor's terminal capability",
    ),
    "actors/commands/demo.py": (
        frozenset({"write_file", "shell", "spawn_agent", "wait"}),
        "the demo's scripted model turns: a model calls tools by their names",
    ),
    "actors/commands/smoke_steps.py": (
        frozenset({"write_file", "read_file", "shell", "spawn_agent", "wait"}),
        "the smoke run's scripted model turns and the outputs it checks, by call name",
    ),
    "actors/models/converse.py": (
        frozenset({"converse"}),
        "Amazon Bedrock's Converse API action, not the tool",
    ),
    "actors/policy/command_tables.py": (
        frozenset({"grep", "complete", "shell", "wait"}),
        "shell programs, builtins and git subcommands the command classifier knows",
    ),
    "actors/policy/shell.py": (frozenset({"grep"}), "the grep program, in a shell line"),
    "actors/policy/shell_network.py": (frozenset({"grep"}), "git's grep subcommand"),
    "environments/shell/scripts.py": (frozenset({"grep"}), "the grep program the environment runs"),
    "protocol/wire_requests.py": (
        frozenset({"read_file", "write_file"}),
        "the wire tags of the environment file requests, not tools",
    ),
}
"""Path -> (the tool names it may hold as strings, why)."""


def own_tools() -> list[Tool]:
    """Every tool Troupe defines: the catalogue and the per-session skill tool."""
    return [*BUILTIN_TOOLS.values(), skill_tool(SkillCatalog())]


def defining_module(tool: Tool) -> str:
    """The path of the module a tool is defined in (where its code is)."""
    module = sys.modules[tool.execute.__module__]
    assert module.__file__ is not None
    return Path(module.__file__).resolve().relative_to(REPO).as_posix()


def _prose(tree: ast.AST) -> set[int]:
    """The ids of docstring constants and of ``__all__``'s strings."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for statement in body if isinstance(body, list) else ():
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                skipped.add(id(statement.value))
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                skipped.update(id(c) for c in ast.walk(node) if isinstance(c, ast.Constant))
    return skipped


def named_tools(source: str, names: set[str]) -> Iterator[tuple[int, str]]:
    """(line, name) for each string constant in ``source`` equal to one of ``names``."""
    tree = ast.parse(source)
    prose = _prose(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in names
            and id(node) not in prose
        ):
            yield node.lineno, node.value


def test_no_module_outside_a_tools_definition_names_it() -> None:
    tools = own_tools()
    home = {tool.name: defining_module(tool) for tool in tools}
    assert SKILL_TOOL in home and "read_file" in home  # the scan has something to find
    found: list[str] = []
    for root in SOURCES:
        for path in sorted((REPO / root).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            allowed = ALLOWED.get(relative, (frozenset[str](), ""))[0]
            for line, name in named_tools(path.read_text(), set(home)):
                if home[name] != relative and name not in allowed:
                    found.append(f"{relative}:{line}: {name!r} (defined in {home[name]})")
    assert not found, "read the tool's facts from its Tool instead:\n" + "\n".join(found)


JS_STRING = re.compile(r"""(["'`])([A-Za-z_]+)\1""")
"""A JavaScript string literal that is one word: how a script would name a tool."""


def test_the_web_page_names_no_tool() -> None:
    """The page's scripts read a call's facts from its event (its ``diff`` fields,
    its ``tool_kind``), or from ``/tool_diffs.js``, made from the tools' own
    declarations; a tool name written in a script would fall behind."""
    names = {tool.name for tool in own_tools()}
    scripts = sorted((REPO / "actors" / "web" / "static").glob("*.js"))
    assert scripts, "the scan has something to read"
    found = [
        f"{path.relative_to(REPO).as_posix()}: {match.group(0)}"
        for path in scripts
        for match in JS_STRING.finditer(path.read_text())
        if match.group(2) in names
    ]
    assert not found, "take the call's facts from its event instead:\n" + "\n".join(found)


def test_the_js_scan_sees_a_quoted_name() -> None:
    source = "if (tool === \"edit_file\") {} const shell = `x`; f('read_file');"
    assert [m.group(2) for m in JS_STRING.finditer(source)] == ["edit_file", "x", "read_file"]


def test_every_allowance_is_still_needed() -> None:
    """An allowance left behind after its use went would hide a new one."""
    names = {tool.name for tool in own_tools()}
    for relative, (allowed, reason) in ALLOWED.items():
        assert reason
        used = {name for _, name in named_tools((REPO / relative).read_text(), names)}
        assert allowed <= used, f"{relative}: {sorted(allowed - used)} no longer named there"


def test_every_tool_a_profile_offers_is_registered_in_the_catalogue() -> None:
    """The catalogue (actors/tools/builtin.py) is where a host that knows a call
    only by its name reads the tool's facts: a profile's tool missing from it would
    show without its kind, diff or hook names there."""
    for name, make in PROFILES.items():
        registry = make().registry
        for tool in (t for n in registry.names() if (t := registry.get(n)) is not None):
            registered = BUILTIN_TOOLS.get(tool.name)
            assert registered is not None, f"{name} offers {tool.name}, not in the catalogue"
            assert dataclasses.replace(registered, description=tool.description) == tool


def test_the_scan_sees_a_name_in_code_and_not_in_prose() -> None:
    source = (
        '"""Uses read_file."""\n'
        '__all__ = ["shell"]\n'
        "LIMITS = {'read_file': 10}\n"
        "def f():\n"
        '    """shell"""\n'
        "    return name == 'shell'\n"
    )
    assert list(named_tools(source, {"read_file", "shell"})) == [(3, "read_file"), (6, "shell")]
