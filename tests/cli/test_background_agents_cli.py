"""``troupe run`` with background subagents: the input that spawns them ends with a
line naming the ones still running, and the run follows on until their results
have come back as follow-up inputs and been answered (then it exits 0)."""

from __future__ import annotations

import json

from tests.cli.conftest import Home, mock_llm

SCRIPT = {
    "conversations": [
        {
            "match": "PARENT",
            "turns": [
                {"tool_calls": [{"name": "spawn_agent", "arguments": {
                    "task": "BACKGROUND: count the files", "background": True}}]},
                {"text": "Started it in the background."},
                {"text": "The background job says: seven files."},
            ],
        },
        {
            "match": "BACKGROUND",
            "turns": [
                {"tool_calls": [{"name": "shell", "arguments": {"command": "echo counting"}}]},
                {"text": "seven files"},
            ],
        },
    ]
}  # fmt: skip


async def test_run_waits_for_background_results_and_shows_them(home: Home) -> None:
    async with mock_llm(SCRIPT) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "PARENT: count them")
        as_json = await home.troupe(
            "run", "--base-url", mock.base_url, "--output-format", "json", "PARENT: again"
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    # The transcript the README shows, in its order.
    expected = [
        "→ spawn_agent(task=BACKGROUND: count the files, background=true)",
        "background subagent spawned: /sessions/",
        "Started it in the background.",
        "[background] still running: a-1 (each result comes back as a follow-up input)",
        "> [Background subagent a-1 completed after 2 turns; its task: BACKGROUND: count the",
        "seven files",
        "The background job says: seven files.",
        "subagent closed: /sessions/",
        "✓ done · 3 turns",
    ]
    at = 0
    for line in expected:
        found = out.find(line, at)
        assert found >= 0, f"{line!r} missing (in order) from:\n{out}"
        at = found + len(line)
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout.decode().strip().splitlines()[-1])
    assert result["status"] == "done"
    assert result["result"] == "The background job says: seven files."
