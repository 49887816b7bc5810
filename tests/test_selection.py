"""What the README's **Test it** section promises about running the suite: the main run
leaves the style checks to a step of their own, ``-m style`` runs them, and
``-m "not slow"`` leaves out the tests that boot heavy parts (tests/selection.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STYLE = "tests/test_style.py"
HEAVY = "tests/environments/test_terminal.py"
"""A file whose tests run on every environment kind (local, SSH, Docker)."""


def collected(*args: str) -> list[str]:
    """The node ids ``pytest --collect-only`` selects with ``args``."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_main_run_leaves_the_style_checks_to_their_own_step() -> None:
    top_level = collected("tests", f"--ignore-glob={ROOT}/tests/*/*")  # tests/*.py only
    assert "tests/test_selection.py::" + test_dash_m_style_runs_ruff_and_pyright.__name__ in (
        top_level
    )
    assert [i for i in top_level if i.startswith(STYLE)] == []


def test_dash_m_style_runs_ruff_and_pyright() -> None:
    style = collected(STYLE, "-m", "style")
    assert sorted(i.split("::")[1] for i in style) == [
        "test_pyright_finds_no_type_errors",
        "test_ruff_check_is_clean",
        "test_ruff_format_is_clean",
    ]
    assert collected(STYLE) == style, "a path naming the file runs its checks too"


def test_not_slow_leaves_out_the_remote_kinds_and_keeps_the_local_one() -> None:
    every = collected(HEAVY)
    quick = collected(HEAVY, "-m", "not slow")
    assert any("[docker" in i or "docker]" in i for i in every)
    assert quick and set(quick) < set(every)
    assert not [i for i in quick if re.search(r"ssh-root|ssh-user|docker", i)]
    assert all("local" in i for i in quick if "[" in i)


def test_ci_runs_the_readme_test_block_the_suite_then_the_style_step() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("**Test it**") :].split("```sh\n", 1)[1].split("```", 1)[0]
    suite, style = block.strip().splitlines()
    assert suite.endswith(".venv/bin/python -m pytest -n auto --dist loadfile")
    assert style == f".venv/bin/python -m pytest -m style {STYLE}"
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'run_step pytest "$test_command"' in ci and 'run_step style "$style_command"' in ci
    assert 'exit "$status"' in ci, "either step failing fails CI"
