"""The plain-line fast path gives exactly the commands bashlex gives, and steps
aside for anything a shell would expand or treat as syntax."""

from __future__ import annotations

import bashlex
import pytest

from actors.policy import shell_parse

PLAIN = [
    "ls -la src | grep -v test && git status --short",
    "X=1 Y=2 rm -rf build",
    "git push origin main;",
    "cd .. && rm -rf ./x || echo failed",
    "python -m pytest tests/policy -q -x",
    "env A=b timeout 5 rm x",
]
NOT_PLAIN = [
    "for x in a; do rm x; done",
    "rm $(which rm)",
    "r''m -rf x",
    "echo x > /etc/passwd",
    "ls *.py",
    "sleep 1 &",
    "time rm x",
    "a ; ; b",
    "(cd x; rm y)",
    "rm ~/x",
]


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_match_bashlex(line: str) -> None:
    walker = shell_parse._Walker(line)
    expected = [item for tree in bashlex.parse(line) for item in walker.walk(tree, False)]
    assert shell_parse._plain(line) == expected


@pytest.mark.parametrize("line", NOT_PLAIN)
def test_lines_with_shell_syntax_take_the_parser(line: str) -> None:
    assert shell_parse._plain(line) is None
