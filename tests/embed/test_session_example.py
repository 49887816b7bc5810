"""The README's sessions example is examples/session_quickstart.py, verbatim, and
it runs as a user copies it (imports included) against the scripted provider in
place of Anthropic (issue 31, point 9)."""

from __future__ import annotations

import os
import sys

from tests.cli.conftest import mock_llm
from tests.embed.conftest import REPO

EXAMPLE = REPO / "examples" / "session_quickstart.py"


async def test_the_sessions_example_is_in_the_readme_and_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert EXAMPLE.read_text().strip() in (REPO / "README.md").read_text()
    async with mock_llm({"turns": [{"text": "Fixed."}]}) as mock:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": mock.base_url,
               "PYTHONPATH": str(REPO)}  # fmt: skip
        import trio

        done = await trio.run_process(
            [sys.executable, str(EXAMPLE)], capture_stdout=True, capture_stderr=True,
            check=False, cwd=tmp_path, env=env,
        )  # fmt: skip
        posts = [r for r in mock.requests if r.method == "POST"]
    assert done.returncode == 0, done.stderr.decode()
    kinds = [line.split()[1] for line in done.stdout.decode().splitlines()]
    assert "user_input" in kinds and kinds[-1] == "processing_end"
    assert posts and posts[0].wire == "anthropic"
