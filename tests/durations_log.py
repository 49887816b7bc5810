"""Where the suite's time goes, as it goes: a pytest plugin and its summary.

Run: ``TROUPE_DURATIONS_LOG=/tmp/d.tsv python -m pytest -p tests.durations_log ...``;
each test phase (setup, call, teardown) is appended to the file when it ends, so a run
that is stopped midway still tells where its time went (``--durations`` prints only at
the end). Under pytest-xdist each worker appends its own lines, tagged with its id.
``python -m tests.durations_log /tmp/d.tsv`` sums the time per directory and per file
and says how busy each worker was. Each line also carries the CPU seconds the worker
spent in that phase (its own user and system time, its threads included, and that of
the child processes it reaped meanwhile), which a loaded machine does not inflate as it
does wall time: ``--cpu`` sums those instead. ``--weights`` prints each file's
wall seconds in the form of tests/file_weights.tsv (tests/scheduling.py).
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from collections.abc import Generator

import pytest

ENV = "TROUPE_DURATIONS_LOG"


def _cpu_seconds() -> float:
    """User and system time of this process and of the children it has reaped."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Tags the phase's report with the CPU seconds spent since the previous phase ended."""
    report = yield
    if os.environ.get(ENV):
        now = _cpu_seconds()
        before = item.stash.get(_LAST_CPU, now)
        report.cpu_seconds = now - before  # type: ignore[attr-defined]
        item.stash[_LAST_CPU] = now
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Starts the item's CPU count (what ran between tests is left to nobody)."""
    if os.environ.get(ENV):
        item.stash[_LAST_CPU] = _cpu_seconds()
    return (yield)


_LAST_CPU = pytest.StashKey[float]()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = os.environ.get(ENV)
    if not path or getattr(report, "node", None) is not None:
        return  # not asked, or xdist's controller relaying what a worker logged itself
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
    line = [f"{time.time():.2f}", worker, report.when, report.outcome]
    cpu = getattr(report, "cpu_seconds", 0.0)
    line += [f"{report.duration:.3f}", f"{cpu:.3f}", report.nodeid]
    with open(path, "a", encoding="utf-8") as log:
        log.write("\t".join(line) + "\n")


def summary(path: str, top: int = 25, cpu: bool = False) -> str:
    """Seconds per directory and per file (all phases), and per worker: wall seconds,
    or CPU seconds with ``cpu`` (lines written before CPU was logged count as 0)."""
    by_directory: dict[str, float] = defaultdict(float)
    by_file: dict[str, float] = defaultdict(float)
    by_worker: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    with open(path, encoding="utf-8") as log:
        for row in log:
            fields = row.rstrip("\n").split("\t")
            worker, seconds, nodeid = fields[1], fields[4], fields[-1]
            if cpu:
                seconds = fields[5] if len(fields) > 6 else "0"
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


def weights(path: str, least: float = 3.0) -> str:
    """Wall seconds per file (all phases), heaviest first, the files of ``least``
    seconds or more: tests/file_weights.tsv, the order tests/scheduling.py hands
    files to the workers in."""
    by_file: dict[str, float] = defaultdict(float)
    with open(path, encoding="utf-8") as log:
        for row in log:
            fields = row.rstrip("\n").split("\t")
            by_file[fields[-1].split("::", 1)[0]] += float(fields[4])
    heavy = sorted((s, f) for f, s in by_file.items() if s >= least)
    return "\n".join(f"{seconds:.0f}\t{name}" for seconds, name in reversed(heavy))


if __name__ == "__main__":
    if "--weights" in sys.argv[2:]:
        print(weights(sys.argv[1]))
    else:
        print(summary(sys.argv[1], cpu="--cpu" in sys.argv[2:]))
