"""Counts the suite's checks, so a change to how the suite runs can show it dropped none.

Run: `python tests/count_checks.py` (totals) or `python tests/count_checks.py --per-file`.
It parses every Python file under tests/ and counts `assert` statements and the calls that
check by raising (`pytest.raises`, `pytest.warns`, `pytest.fail`, `pytest.deprecated_call`,
`trio.testing`'s `RaisesGroup`/`Matcher`). The number of tests comes from
`pytest --collect-only -q`; this counts what the tests check, which collection cannot see.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

RAISING_CALLS = frozenset({"raises", "warns", "fail", "deprecated_call", "RaisesGroup", "Matcher"})


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def count_file(path: Path) -> Counter[str]:
    """The asserts and raising checks in one file."""
    counts: Counter[str] = Counter()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            counts["assert"] += 1
        elif isinstance(node, ast.Call) and _call_name(node) in RAISING_CALLS:
            counts[f"pytest.{_call_name(node)}"] += 1
    return counts


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent
    total: Counter[str] = Counter()
    per_file = "--per-file" in argv
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == Path(__file__).name:
            continue
        counts = count_file(path)
        total += counts
        if per_file and counts:
            print(f"{sum(counts.values()):6d}  {path.relative_to(root.parent)}")
    for name, value in sorted(total.items()):
        print(f"{name}: {value}")
    print(f"total: {sum(total.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
