"""The tree stays ruff-clean: lint and format are part of the test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
