"""Following a recipe of docs/extending.md for real: copies of the project's packages
under a temporary root, edited as the recipe says, and a program run on them.

A recipe that adds to an existing file (a frame to ``protocol/events.py``, a rule to
``actors/policy/engine.py``) is tested on a copy, so the repository is never
touched: the copied packages come first on ``PYTHONPATH``, the rest of the project
after them. The code a recipe shows sits in a block right after
``<!-- into: PATH -->``; a test inserts that very block, so the page cannot show
code that does not work.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PAGE = REPO / "docs" / "extending.md"
INTO = re.compile(r"^<!-- into: (\S+) -->\n```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
PROGRAM_GUARD = 300
"""Seconds a recipe's program may take before it counts as hung."""


def shown_into(path: str) -> str:
    """The code the page shows going into ``path`` (exactly one block)."""
    found = [code for target, code in INTO.findall(PAGE.read_text()) if target == path]
    assert len(found) == 1, f"docs/extending.md shows {len(found)} blocks into {path}"
    return found[0]


def without_imports(code: str) -> str:
    """``code`` without its top-level imports: the block imports what it uses so
    that it runs on its own (every doc block does); the file it goes into has them."""
    tree = ast.parse(code)
    skip = {
        line
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    lines = code.splitlines(keepends=True)
    return "".join(line for number, line in enumerate(lines, 1) if number not in skip).strip("\n")


def copy_packages(root: Path, *names: str) -> None:
    """The project's top-level packages ``names`` (``protocol``, ``actors``), copied
    under ``root`` to be edited."""
    for name in names:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path``."""
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name}: {old!r} occurs {text.count(old)} times"
    path.write_text(text.replace(old, new))


def run_program(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python *argv`` with the edited copies under ``root`` first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO)])
    done = subprocess.run(
        [sys.executable, *argv], cwd=root, env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=PROGRAM_GUARD,
    )  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _top_level(path: Path, name: str) -> ast.stmt:
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == name
        ):
            return node
    raise AssertionError(f"{path.name} defines no {name}")


def end_of(path: Path, name: str) -> int:
    """The last line of the class or function ``name`` (its body's end)."""
    node = _top_level(path, name)
    assert node.end_lineno is not None
    return node.end_lineno


def start_of_body(path: Path, name: str) -> int:
    """The line after which the first statement of function ``name`` goes (past
    its docstring), so that code put there runs first."""
    node = _top_level(path, name)
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    first = node.body[0]
    has_docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return (first.end_lineno or first.lineno) if has_docstring else first.lineno - 1


def insert_after(path: Path, line: int, text: str) -> None:
    """Insert the lines of ``text`` after line ``line`` (1-based) of ``path``."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:line], text.rstrip("\n") + "\n", *lines[line:]]))


def first_case(path: Path, function: str) -> tuple[int, str]:
    """Where a new ``case`` goes in the first ``match`` of ``function``: before its
    first case (the line after which to insert it, and the case's indentation)."""
    node = _top_level(path, function)
    match = next(n for n in ast.walk(node) if isinstance(n, ast.Match))
    case = match.cases[0].pattern
    return case.lineno - 1, " " * (case.col_offset - len("case "))
