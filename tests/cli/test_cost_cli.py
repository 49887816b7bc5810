"""The cost ledger from the command line: ``troupe run --max-cost`` stops at the
expected round (catalog prices, cache included), the result object carries the
ledger, and ``troupe sessions`` shows it afterwards from the store."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Home, mock_llm

USAGE = {"input": 100_000, "output": 1_000, "cache_read": 50_000, "cache_write": 10_000}
CALL_COST = (100_000 * 3 + 1_000 * 15 + 50_000 * 0.30 + 10_000 * 3.75) / 1_000_000
SCRIPT = {
    "turns": [
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "notes.txt"}}],
         "usage": USAGE}
    ],
    "repeat": True,
}  # fmt: skip


async def test_max_cost_stops_the_run_and_the_ledger_is_kept(home: Home) -> None:
    (home.work / "notes.txt").write_text("alpha\n")
    async with mock_llm(SCRIPT) as mock:
        done = await home.troupe(
            "run", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
            "--base-url", mock.base_url, "--max-cost", "1.2", "--output-format", "json",
            "read the notes",
        )  # fmt: skip
    assert done.returncode == 53, done.stderr.decode()
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert result["status"] == "turn_limit" and result["num_turns"] == 4
    spend = result["spend"]
    assert spend["calls"] == 4 and spend["cost_usd"] == pytest.approx(4 * CALL_COST)
    assert spend["cache_read_tokens"] == 200_000 and spend["cache_write_tokens"] == 40_000

    listed = await home.troupe("sessions", "--json")
    assert listed.returncode == 0, listed.stderr.decode()
    (line,) = [json.loads(row) for row in listed.stdout.decode().splitlines()]
    assert line["spend"]["cost_usd"] == pytest.approx(4 * CALL_COST)
    table = await home.troupe("sessions")
    assert "COST" in table.stdout.decode() and "$1.4700" in table.stdout.decode()


async def test_a_bad_max_cost_is_one_line(home: Home) -> None:
    done = await home.troupe("run", "--max-cost", "-1", "hello")
    assert done.returncode == 2
    assert b"max_cost must be a number of dollars" in done.stderr
    assert b"Traceback" not in done.stderr
