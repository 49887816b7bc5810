"""The tree stays ruff-clean and pyright-clean: CI's style step (``pytest -m style``,
run by .ci/run beside the main run, which leaves these out) fails when either finds
something."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.style


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    # The ruff installed with the test extra, next to this Python, before any other.
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        pytest.skip(
            "ruff is not installed (it comes with the test extra: pip install -e '.[test]')"
        )
    return subprocess.run([found, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_check_is_clean() -> None:
    done = ruff("check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean() -> None:
    done = ruff("format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_pyright_finds_no_type_errors() -> None:
    """The type checker runs in the test command (settings in pyproject.toml: strict
    on protocol/ and actors/kernel/). The pyright package runs on the machine's
    Node.js, which .ci/run installs when it is missing."""
    beside = Path(sys.executable).with_name("pyright")
    found = str(beside) if beside.exists() else shutil.which("pyright")
    if found is None:
        pytest.skip("pyright is not installed (it comes with the test extra)")
    if shutil.which("node") is None:
        pytest.skip("Node.js is missing (apt-get install nodejs; .ci/run does it)")
    done = subprocess.run(
        [found, "--pythonpath", sys.executable],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert "0 errors" in done.stdout
