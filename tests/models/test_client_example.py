"""The README's model-client example runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "client_generate.py"


def test_the_readme_shows_the_example() -> None:
    assert EXAMPLE.read_text().strip() in (ROOT / "README.md").read_text()


def test_the_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "answer: 42 after 2 steps\ncost known: True\n"
