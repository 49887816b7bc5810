"""The order pytest-xdist hands out the suite's files (tests/conftest.py calls it).

``--dist loadfile`` keeps each file on one worker, and xdist by default hands the
files out by their number of tests, most first. But the longest files are not the
ones with most tests: a file of three tests that each boot a server, or run the ACP
client on Node.js, took a minute, and when it came last one worker ran it alone while
the other core sat idle. Here the files go out longest first (the classic longest-
processing-time order, which leaves the short files to even out the end), by the
seconds in ``tests/file_weights.tsv``, measured on a full run; a file not listed
there is weighed by its number of tests. The tests inside a file keep their order.

Regenerate the weights after a full run with the durations log:
``python -m tests.durations_log LOG --weights > tests/file_weights.tsv``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

WEIGHTS = Path(__file__).with_name("file_weights.tsv")
SECONDS_PER_TEST = 0.1
"""What a test of an unlisted file is taken to cost (most files of many short tests)."""


def file_weights(path: Path = WEIGHTS) -> dict[str, float]:
    """``file -> seconds`` from the weights file (empty where it is missing)."""
    weights: dict[str, float] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return weights
    for line in lines:
        seconds, _, name = line.partition("\t")
        if name and not line.startswith("#"):
            weights[name] = float(seconds)
    return weights


def longest_first(items: list[pytest.Item], weights: dict[str, float] | None = None) -> None:
    """Sorts ``items`` by their file's weight, heaviest file first (stable: a file's
    tests stay together and in order; files of equal weight keep pytest's order)."""
    weights = file_weights() if weights is None else weights
    counts: dict[str, int] = {}
    for item in items:
        name = item.nodeid.split("::", 1)[0]
        counts[name] = counts.get(name, 0) + 1

    def weight(item: pytest.Item) -> float:
        name = item.nodeid.split("::", 1)[0]
        return weights.get(name, counts[name] * SECONDS_PER_TEST)

    order = {name: index for index, name in enumerate(counts)}
    items.sort(key=lambda item: (-weight(item), order[item.nodeid.split("::", 1)[0]]))


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def keep_collection_order(config: pytest.Config) -> None:
    """In the controller: xdist takes the files in the order the workers collected
    them (ours), instead of re-sorting them by number of tests."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
