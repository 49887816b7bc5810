"""The installed ``troupe`` command answers --version and --help."""

from __future__ import annotations

import shutil
import subprocess
import sys

from actors.cli import version


def troupe(*args: str) -> subprocess.CompletedProcess[str]:
    command = shutil.which("troupe")
    argv = [command] if command else [sys.executable, "-m", "actors.cli"]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=60)


def test_version() -> None:
    done = troupe("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"troupe {version()}"
    assert version() != "unknown", "the distribution should be installed for the tests"


def test_the_version_is_written_once() -> None:
    """The installed metadata's version is built from ``actors.__version__``."""
    from importlib import metadata

    import actors

    assert metadata.version("troupe-agents") == actors.__version__ == version()


def test_help() -> None:
    done = troupe("--help")
    assert done.returncode == 0
    assert "actor-based runtime for coding agents" in done.stdout


PARSED_LINES = (
    ["run", "--embedded", "--output-format", "json", "-p", "hi"],
    ["run", "--resume", "last", "--max-turns", "3", "go on"],
    ["serve", "--port", "0"],
    ["sessions", "--data-dir", "/tmp/x"],
    ["rewind", "s-1", "--to-input", "2"],
    ["batch", "tasks.jsonl", "--out", "p.jsonl", "--model", "m"],
    ["--embedded", "--model", "run"],
    ["--model", "run", "serve", "--port", "0"],
    ["acp", "--base-url", "http://127.0.0.1:1"],
)


def test_the_parser_of_one_command_parses_as_the_whole() -> None:
    """``main`` fills in only the arguments of the commands among its words: the
    same namespace as the whole parser's, and the same ``troupe --help``."""
    from actors.cli import build_parser

    whole = build_parser()
    for line in PARSED_LINES:
        try:
            expected = whole.parse_args(line)
        except SystemExit:
            continue  # a line this version does not take: nothing to compare
        assert build_parser(only=frozenset(line)).parse_args(line) == expected, line
    assert build_parser(only=frozenset()).format_help() == whole.format_help()


def test_a_mistyped_flag_is_matched_against_every_command() -> None:
    """``--keep-worktrees`` is ``batch``'s: ``run``'s parser alone does not have it."""
    done = troupe("run", "--keep-worktres", "hi")
    assert done.returncode == 2
    assert "did you mean --keep-worktrees?" in done.stderr, done.stderr
