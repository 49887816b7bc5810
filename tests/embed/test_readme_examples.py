"""The README's asyncio embedding example is examples/asyncio_counter.py, verbatim,
and it runs; the README names every example the tests run."""

from __future__ import annotations

import subprocess
import sys

from tests.embed.conftest import REPO


def test_the_asyncio_example_is_in_the_readme_and_runs() -> None:
    example = REPO / "examples" / "asyncio_counter.py"
    readme = (REPO / "README.md").read_text()
    assert example.read_text().strip() in readme
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "total: 42\n"


def test_the_readme_names_the_web_examples() -> None:
    readme = (REPO / "README.md").read_text()
    for name in ("fastapi_sessions.py", "aiohttp_sessions.py", "quart_trio_sessions.py"):
        assert (REPO / "examples" / name).exists()
        assert f"`{name}`" in readme
