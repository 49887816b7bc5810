"""docs/extending.md cannot drift from its tests: every recipe names the tests that
back it, each exists and holds tests, and each file a recipe says it touches exists
and is named by one of those tests (by path or module), so a test goes through it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.extending.patching import INTO, PAGE, REPO

RECIPES = ("Add an environment kind", "Add a protocol frame", "Add a policy rule")
"""Recipes the page must have; every section titled "Add ..." is a recipe, and any
other section that names tests is checked the same way."""
TICKED = re.compile(r"`([^`]+)`")


def sections(text: str) -> dict[str, str]:
    """The page's ``## `` sections by title."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def named(body: str, label: str) -> list[str]:
    """The repository paths in backticks on the ``**label:**`` line of a section
    (up to the next line that starts with ``**``)."""
    match = re.search(rf"^\*\*{label}:\*\*(.*?)(?=^\*\*|^$)", body, re.MULTILINE | re.DOTALL)
    if match is None:
        return []
    return [t for t in TICKED.findall(match.group(1)) if "/" in t and "." in t.rsplit("/")[-1]]


def defined_tests(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")]  # fmt: skip


def mentions(source: str, path: str) -> bool:
    """Whether a test's source names ``path``: as itself, its file name, or its module."""
    module = path.removesuffix(".py").replace("/", ".")
    return any(form in source for form in (path, Path(path).name, module))


def test_the_page_has_each_recipe_and_each_names_its_tests_and_files() -> None:
    found = sections(PAGE.read_text())
    for title in RECIPES:
        assert title in found, f"docs/extending.md has no section '## {title}'"
    for title in [title for title in found if title.startswith("Add ")]:
        assert named(found[title], "Tests"), f"'{title}' names no backing test (**Tests:**)"
        assert named(found[title], "Files"), f"'{title}' names no file (**Files:**)"


def test_each_named_test_exists_and_goes_through_the_named_files() -> None:
    for title, body in sections(PAGE.read_text()).items():
        tests = named(body, "Tests")
        sources = []
        for test in tests:
            path = REPO / test
            assert path.is_file(), f"'{title}' names {test}, which does not exist"
            assert defined_tests(path), f"'{title}' names {test}, which holds no test"
            sources.append(path.read_text())
        for file in named(body, "Files") if tests else []:
            assert (REPO / file).exists(), f"'{title}' names {file}, which does not exist"
            assert any(mentions(source, file) for source in sources), (
                f"'{title}' says it touches {file}, but none of its tests names it"
            )


def test_the_check_finds_a_missing_test_and_an_untested_file() -> None:
    body = "\n**Files:** `protocol/events.py`, `actors/cli.py`\n**Tests:** `tests/nope.py`\n\n"
    assert named(body, "Files") == ["protocol/events.py", "actors/cli.py"]
    assert named(body, "Tests") == ["tests/nope.py"]
    assert not (REPO / "tests/nope.py").exists()
    assert mentions("from protocol.events import X", "protocol/events.py")
    assert not mentions("from protocol.events import X", "actors/cli.py")


def test_the_readme_links_the_page() -> None:
    assert "(docs/extending.md)" in (REPO / "README.md").read_text()


def test_every_block_the_page_puts_into_a_file_is_inserted_by_a_test() -> None:
    """A block after ``<!-- into: PATH -->`` is code a recipe adds to PATH; a test
    inserts it there (``shown_into``) and runs the result, so none is only shown."""
    targets = [target for target, _ in INTO.findall(PAGE.read_text())]
    assert targets, "the page shows no code going into a file"
    sources = "".join(p.read_text() for p in (REPO / "tests" / "extending").glob("test_*.py"))
    for target in targets:
        assert f'shown_into("{target}")' in sources, f"no test inserts the block into {target}"
