"""The fast readers give exactly the commands bashlex gives, and step aside for
anything they do not read (substitutions, groups, braces, reserved words,
here-documents, backgrounding)."""

from __future__ import annotations

import bashlex
import pytest

from actors.policy import shell_parse
from actors.policy.shell_lex import quick_parse

PLAIN = [
    "ls -la src | grep -v test && git status --short",
    "X=1 Y=2 rm -rf build",
    "git push origin main;",
    "cd .. && rm -rf ./x || echo failed",
    "python -m pytest tests/policy -q -x",
    "env A=b timeout 5 rm x",
]
QUICK = [
    *PLAIN,
    "r''m -rf x",
    '"rm" -rf x',
    "echo x > /etc/passwd",
    "ls *.py",
    "rm ~/x",
    "git commit -m 'fix: the thing' && git push",
    'grep -rn "TODO later" src/ | head -20',
    "pytest -q 2>&1 | tail -5",
    "ls >&2",
    "cat <<< 'text' | wc -l",
    "cat < in.txt > out.txt 2>> err.log",
    "echo $HOME ${HOME}/x \"$f\" '$HOME' $$ $?",
    "ls [ab].txt /tmp/? x[",
    "find . -name '*.py' -exec grep -l TODO {} +",
    "echo 'a;b|c' \"d&e\"",
    "cmd &> all.log",
    "sort -o out.txt in.txt; uniq a b",
    "exec 3<>/dev/tcp/10.0.0.1/80",
    "~/bin/tool --flag=~/x a=~/y",
    "x='a b' y=\"c $d\" cmd",
    "[ -f x ] && echo yes",
]
NOT_QUICK = [
    "for x in a; do rm x; done",
    "rm $(which rm)",
    "sleep 1 &",
    "time rm x",
    "a ; ; b",
    "(cd x; rm y)",
    "{rm,-rf,x}",
    "echo `id`",
    "cat <<EOF\nx\nEOF",
    "f() { ls; }",
    "echo ${x:-y}",
    "echo \\$HOME",
    "! true",
    "[[ -f x ]]",
    "ls | ",
    "echo # comment",
]


def test_quote_removal_is_the_shells_not_bashlexs() -> None:
    """bashlex keeps the quotes of ``"a"'b'``; a hidden name split that way must
    still be seen (``"$HOME/.s"'sh/id_rsa'``)."""
    assert shell_parse.unquote("\"a\"'b'") == "ab"
    assert shell_parse.unquote("$'\\x2essh'") == ".ssh"
    assert shell_parse.unquote("\"$(echo 'a b')\"x") == "$(echo 'a b')x"
    assert shell_parse.unquote("c\\at") == "cat"
    assert quick_parse("\"a\"'b'") == [shell_parse.SimpleCommand((shell_parse.Word("ab"),))]


def _bashlex(line: str) -> list[object]:
    walker = shell_parse._Walker(line)
    return [item for tree in bashlex.parse(line) for item in walker.walk(tree, False)]


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_match_bashlex(line: str) -> None:
    assert shell_parse._plain(line) == _bashlex(line)


@pytest.mark.parametrize("line", QUICK)
def test_quick_lines_match_bashlex(line: str) -> None:
    assert quick_parse(line) == _bashlex(line)


@pytest.mark.parametrize("line", NOT_QUICK)
def test_lines_with_more_shell_syntax_take_the_parser(line: str) -> None:
    assert quick_parse(line) is None
    assert shell_parse._plain(line) is None
