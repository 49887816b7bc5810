"""Every code block of README.md and docs/*.md is exercised (issue 31, point 8):
Python blocks compile and their imports run as written (tests/cli/test_doc_blocks_run.py
runs every python and sh block whole); every ``troupe`` command
line parses with the real parser; TOML loads (a config block as a config file);
JSON parses; YAML scripts parse (tests/cli/test_docs.py runs them). docs/cli.md
names every command and every flag of ``troupe run`` that ``--help`` lists; and
the README's first screen says what Troupe is, how to install it, and the two
commands."""

from __future__ import annotations

import argparse
import ast
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from actors.cli import build_parser
from tests.cli.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.DOTALL | re.MULTILINE)


def code_blocks(kind: str) -> list[tuple[str, str]]:
    """(where, text) of every block of ``kind`` in the docs, indentation removed."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in FENCE.finditer(text):
            if match.group(2) != kind:
                continue
            indent = len(match.group(1))
            body = "\n".join(line[indent:] for line in match.group(3).splitlines())
            line = text[: match.start()].count("\n") + 1
            found.append((f"{path.name}:{line}", body))
    return found


PYTHON = code_blocks("python")


@pytest.mark.parametrize(("where", "code"), PYTHON, ids=[w for w, _ in PYTHON])
def test_python_blocks_compile_and_their_imports_run(where: str, code: str) -> None:
    tree = ast.parse(code, filename=where)  # a top-level await is a fragment: still parsed
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    if not imports:
        return
    program = "\n".join(ast.unparse(node) for node in imports)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          cwd=REPO, timeout=120)  # fmt: skip
    assert done.returncode == 0, f"{where}: {done.stderr}"


def _troupe_lines(block: str) -> list[str]:
    lines = []
    for raw in block.splitlines():
        line = raw.split("  #", 1)[0].strip()
        if "|" in line:
            line = line.rsplit("|", 1)[1].strip()
        if line.startswith("troupe "):
            lines.append(line)
    return lines


SHELL = [(where, line) for where, block in code_blocks("sh") for line in _troupe_lines(block)]


@pytest.mark.parametrize(("where", "line"), SHELL, ids=[f"{w} {text[:40]}" for w, text in SHELL])
def test_troupe_command_lines_parse(where: str, line: str) -> None:
    try:
        build_parser().parse_args(shlex.split(line)[1:])
    except SystemExit as exit:
        pytest.fail(f"{where}: `{line}` does not parse (exit {exit.code})")


def test_there_are_command_lines_and_programs_to_check() -> None:
    assert len(SHELL) >= 10 and len(PYTHON) >= 8


@pytest.mark.parametrize(("where", "text"), code_blocks("toml"))
def test_toml_blocks_load(where: str, text: str, tmp_path: Path) -> None:
    from actors.config import load_config

    tomllib.loads(text)
    if "[mcp_servers." in text and "wire" not in text and "model" not in text:
        return  # a fragment of the MCP section, loaded by tests/mcp
    path = tmp_path / "config.toml"
    path.write_text(text)
    load_config(path)


@pytest.mark.parametrize(("where", "text"), code_blocks("json"))
def test_json_blocks_parse(where: str, text: str) -> None:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        for line in text.strip().splitlines():  # JSON lines
            json.loads(line)


def _named(option: str, text: str) -> bool:
    return re.search(rf"{re.escape(option)}(?![\w-])", text) is not None


def test_docs_cli_names_every_command_and_every_flag() -> None:
    """docs/cli.md matches ``--help``: every command, and every flag any command's
    help lists (mock-llm's in docs/mock-llm.md, its own page)."""
    cli = (REPO / "docs" / "cli.md").read_text()
    mock = (REPO / "docs" / "mock-llm.md").read_text()
    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert isinstance(choices, dict)
    commands: dict[str, argparse.ArgumentParser] = choices
    for name in commands:
        assert f"troupe {name}" in cli, name
    unnamed = []
    for name, command in [("troupe", parser), *commands.items()]:
        page = mock if name == "mock-llm" else cli
        for action in command._actions:
            if action.help == "==SUPPRESS==":
                continue
            for option in action.option_strings:
                listed = option.startswith("--") and option not in ("--help", "--debug")
                if listed and not _named(option, page):
                    unnamed.append(f"{name} {option}")
    assert unnamed == []


def test_the_first_screen_says_what_how_and_the_two_commands() -> None:
    first = "\n".join((REPO / "README.md").read_text().splitlines()[:40])
    assert "coding agent" in first
    assert "## Install" in first
    assert "**Run it**" in first and "**Test it**" in first
    assert ".venv/bin/troupe demo" in first and ".venv/bin/python -m pytest" in first
