"""docs/hooks.md's worked example, written as the page shows it and run: ``rm`` is
blocked with the hook's reason, the log lists only what ran, the Codex hook's
context and its ``curl`` denial reach the model, and ``troupe audit`` shows the
runs."""

from __future__ import annotations

import json

from tests.cli.conftest import REPO, Home, mock_llm, request_bodies, shell_then_text, text_of
from tests.docs_files import plant

PAGE = REPO / "docs" / "hooks.md"


async def test_the_worked_example_behaves_as_the_page_says(home: Home) -> None:
    written = plant(PAGE, home.work)
    assert len(written) == 5, written
    (home.work / "build").mkdir()
    assert (await home.troupe("trust")).returncode == 0
    script = shell_then_text("rm -rf build", "ls", "curl -s https://example.com")
    async with mock_llm(script) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "--output-format", "json",
                                 "Clean up the build directory")  # fmt: skip
        assert done.returncode == 0, done.stderr
        bodies = request_bodies(mock)
    assert "The release branch is frozen." in text_of(bodies[0])
    page = PAGE.read_text()
    blocked = "Blocked by a PreToolUse hook: rm is not allowed here; move files to ./trash instead"
    assert blocked in text_of(bodies[1])
    assert blocked in " ".join(page.replace("`", "").split()), "the page says what happens"
    assert (home.work / "build").is_dir()
    assert "no network tools in this repository" in text_of(bodies[3])
    assert (home.work / "commands.log").read_text() == "ls\n"
    session = json.loads(done.stdout)["session_id"]
    audit = (await home.troupe("audit", session)).stdout.decode()
    assert "hook  PreToolUse shell: block (exit 2)" in audit
    assert "-- rm is not allowed here" in audit
