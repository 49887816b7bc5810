"""Workspace snapshots from the command line (docs/snapshots.md): ``troupe run``
records the tree at the input and before the shell round, in the data directory's
``shadow/`` (not in the tree, not in ~/.cache); ``snapshots = false`` in the config
file switches them off."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.cli.conftest import Home, mock_llm, shell_then_text


async def snapshot_events(home: Home) -> list[dict[str, Any]]:
    async with mock_llm(shell_then_text("echo made > made.txt")) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--policy", "permissive",
            "--output-format", "stream-json", "make a file",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert (home.work / "made.txt").read_text() == "made\n"
    events = [json.loads(line) for line in done.stdout.decode().splitlines() if line]
    return [e["data"] for e in events if e.get("kind") == "workspace_snapshot"]


async def test_run_records_the_tree_in_the_data_directory(home: Home) -> None:
    (home.work / "kept.txt").write_text("kept\n")
    snapshots = await snapshot_events(home)
    assert [s["reason"] for s in snapshots] == ["input", "round"]
    shadow = Path(snapshots[0]["shadow"])
    assert shadow.parent == home.data / "shadow"
    assert (shadow / "HEAD").is_file()
    assert sorted(p.name for p in home.work.iterdir()) == ["kept.txt", "made.txt"]
    assert not (home.root / "home" / ".cache" / "troupe").exists()


async def test_snapshots_false_in_the_config_file(home: Home) -> None:
    home.config.write_text("snapshots = false\nsnapshot_max_file_bytes = 1000\n")
    shown = (await home.troupe("config")).stdout.decode()
    assert re.search(rf"^snapshots +false +{re.escape(str(home.config))}$", shown, re.M)
    assert re.search(r"^snapshot_max_file_bytes +1000 ", shown, re.M)
    assert await snapshot_events(home) == []
    assert not (home.data / "shadow").exists()


async def test_a_bad_setting_is_one_line(home: Home) -> None:
    home.config.write_text('snapshots = "sometimes"\n')
    done = await home.troupe("config")
    assert done.returncode != 0
    said = done.stderr.decode().splitlines()
    assert len(said) == 1 and "snapshots" in said[0] and str(home.config) in said[0]
