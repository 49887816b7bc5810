"""``troupe nodes`` (issue 37): which node of the fleet owns which session, and
how old each lease is, read from the store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trio

from actors.mockllm import serve_mock_llm
from tests.fleet.conftest import fleet
from tests.fleet.test_failover import _create, slow_script
from tests.wire.conftest import REPO


async def _nodes(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "actors.cli", "nodes", *args]
    return await trio.to_thread.run_sync(
        lambda: subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=60)
    )


async def test_nodes_lists_who_owns_what(tmp_path: Path, postgres_url: str) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    async with (
        serve_mock_llm(slow_script()) as mock,
        fleet(root, postgres_url, mock.base_url, 2) as (
            first,
            second,
        ),
    ):
        (one,) = await _create(first, 1)
        (two,) = await _create(second, 1)
        done = await _nodes("--store", postgres_url, "--json")
        assert done.returncode == 0, done.stderr
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        nodes = {row["node"]: row for row in rows if "url" in row}
        assert {name: (row["url"], row["sessions"]) for name, row in nodes.items()} == {
            first.name: (first.url, 1),
            second.name: (second.url, 1),
        }
        leases = {row["session"]: row for row in rows if "session" in row}
        assert {s: (row["node"], row["epoch"]) for s, row in leases.items()} == {
            one: (first.name, 1),
            two: (second.name, 1),
        }
        assert all(row["expires_in"] > 0 and row["renewed_ago"] >= 0 for row in leases.values())

        shown = await _nodes("--store", postgres_url)
        assert shown.returncode == 0, shown.stderr
        assert first.url in shown.stdout and one in shown.stdout and two in shown.stdout


async def test_nodes_without_postgresql_is_one_line(tmp_path: Path) -> None:
    done = await _nodes("--store", "sqlite")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "PostgreSQL" in done.stderr
