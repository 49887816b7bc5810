"""Where the suite's time goes, as it goes: a pytest plugin and its summary.

Run: ``TROUPE_DURATIONS_LOG=/tmp/d.tsv python -m pytest -p tests.durations_log ...``;
each test phase (setup, call, teardown) is appended to the file when it ends, so a run
that is stopped midway still tells where its time went (``--durations`` prints only at
the end). Under pytest-xdist each worker appends its own lines, tagged with its id.
``python -m tests.durations_log /tmp/d.tsv`` sums the time per directory and per file
and says how busy each worker was.
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict

import pytest

ENV = "TROUPE_DURATIONS_LOG"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = os.environ.get(ENV)
    if not path or getattr(report, "node", None) is not None:
        return  # not asked, or xdist's controller relaying what a worker logged itself
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
    line = [f"{time.time():.2f}", worker, report.when, report.outcome]
    line += [f"{report.duration:.3f}", report.nodeid]
    with open(path, "a", encoding="utf-8") as log:
        log.write("\t".join(line) + "\n")


def summary(path: str, top: int = 25) -> str:
    """Seconds per directory and per file (all phases), and per worker."""
    by_directory: dict[str, float] = defaultdict(float)
    by_file: dict[str, float] = defaultdict(float)
    by_worker: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    with open(path, encoding="utf-8") as log:
        for row in log:
            _, worker, _, _, seconds, nodeid = row.rstrip("\n").split("\t", 5)
            file = nodeid.split("::", 1)[0]
            directory = file.rsplit("/", 1)[0] if file.count("/") > 1 else file
            by_directory[directory] += float(seconds)
            by_file[file] += float(seconds)
            by_worker[worker] += float(seconds)
            tests[directory].add(nodeid)
    lines = ["seconds  tests  directory"]
    for name, seconds in sorted(by_directory.items(), key=lambda kv: -kv[1]):
        lines.append(f"{seconds:7.0f}  {len(tests[name]):5d}  {name}")
    lines += ["", f"seconds  file (top {top})"]
    for name, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{seconds:7.0f}  {name}")
    lines += ["", "seconds  worker"]
    lines += [f"{seconds:7.0f}  {name}" for name, seconds in sorted(by_worker.items())]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1]))
