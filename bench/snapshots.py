"""Workspace snapshot benchmark: what a snapshot costs per input on a 10,000-file tree.

    python bench/snapshots.py          # a table
    python bench/snapshots.py --json   # one JSON object
    python bench/snapshots.py --quick  # 2,000 files, fewer repeats (a smoke run)

A git repository of 10,000 files (100 directories of 100 text files, about 1 KB
each) is snapshotted the way a session does it: ``take_snapshot`` through a real
:class:`LocalEnvironment` (one ``bash -c`` in the environment, the actor round trip
included), into a shadow repository outside the tree. The baseline, measured in the
same run and alternated with it (:func:`bench.report.compare`), is what a user would
run by hand: ``git add -A && git commit`` in the tree's own repository.

- ``first``: the first snapshot of the tree (an empty shadow repository) against the
  first ``git add -A && git commit`` (a fresh ``git init``): every file is hashed.
- ``incremental``: after 10 files changed, against the same commit by hand: git's
  index makes both a ``stat`` per file plus the changed files.
- ``unchanged``: a snapshot when nothing changed (the usual input between rounds of
  reading): the same commit again.

Figures: wall milliseconds of each side (snapshots run in child processes, so wall
time is the honest measure) and the ratios ours / baseline (min and median).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import Runtime
from actors.workspace import take_snapshot
from bench.report import Figure, Samples, compare, emit, parse_args, ratios, sample_figures
from environments.local import LocalEnvironment

CHANGED = 10
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def make_tree(root: Path, files: int) -> list[Path]:
    """``files`` text files of about 1 KB in directories of 100; returns them."""
    made: list[Path] = []
    for index in range(files):
        directory = root / f"pkg{index // 100:03d}"
        directory.mkdir(exist_ok=True)
        path = directory / f"module{index % 100:03d}.py"
        path.write_text(
            "".join(f"def f{index}_{line}(x):  # line {line}\n    return x\n" for line in range(24))
        )
        made.append(path)
    (root / ".gitignore").write_text("*.pyc\n__pycache__/\n")
    return made


def git(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, env=GIT_ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


class Bench:
    """The tree, the shadow base, and a counter so every change is new content."""

    def __init__(self, root: Path, shadow: Path, files: list[Path]) -> None:
        self.root = root
        self.shadow = shadow
        self.files = files
        self.edits = 0

    def change(self) -> None:
        self.edits += 1
        for path in self.files[:: len(self.files) // CHANGED][:CHANGED]:
            with path.open("a") as out:
                out.write(f"# edit {self.edits}\n")

    def snapshot(self) -> float:
        """Wall seconds of one ``take_snapshot`` through the environment actor."""

        async def run() -> float:
            async with Runtime() as runtime:
                env = await runtime.spawn(LocalEnvironment(self.root))
                started = time.perf_counter()
                await take_snapshot(env, root=str(self.root), shadow_base=str(self.shadow))
                return time.perf_counter() - started

        return trio.run(run)

    def by_hand(self) -> float:
        started = time.perf_counter()
        git(self.root, "git add -A && git commit -q -m snapshot")
        return time.perf_counter() - started

    # the sides -------------------------------------------------------------

    def first_snapshot(self) -> float:
        shutil.rmtree(self.shadow, ignore_errors=True)
        return self.snapshot()

    def first_by_hand(self) -> float:
        shutil.rmtree(self.root / ".git", ignore_errors=True)
        git(self.root, "git init -q")
        return self.by_hand()

    def incremental_snapshot(self) -> float:
        self.change()
        return self.snapshot()

    def incremental_by_hand(self) -> float:
        self.change()
        return self.by_hand()


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    count, first_repeats, repeats = (2_000, 1, 3) if args.quick else (10_000, 3, 7)
    base = Path(tempfile.mkdtemp(prefix="troupe-bench-snapshots-"))
    try:
        root = base / "tree"
        root.mkdir()
        bench = Bench(root, base / "shadow", make_tree(root, count))
        first = compare(
            {"ours": bench.first_snapshot, "git": bench.first_by_hand}, first_repeats, warmups=0
        )
        incremental = compare(
            {"ours": bench.incremental_snapshot, "git": bench.incremental_by_hand}, repeats
        )
        unchanged = compare({"ours": bench.snapshot}, repeats)["ours"]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ms = 1000
    figures = [
        Figure("files", "files in the tree", count, ""),
        Figure("changed_files", "files changed before each incremental run", CHANGED, ""),
        Figure("first_ms", "first snapshot (min)", first["ours"].min * ms, "ms"),
        Figure("first_git_ms", "first git add -A && git commit (min)", first["git"].min * ms, "ms"),
        *sample_figures(
            "first_ratio", "first: snapshot / git", ratios(first["ours"], first["git"]), "x"
        ),
        Figure("incremental_ms", "incremental snapshot (min)", incremental["ours"].min * ms, "ms"),
        Figure(
            "incremental_git_ms",
            "incremental git add -A && git commit (min)",
            incremental["git"].min * ms,
            "ms",
        ),
        *sample_figures(
            "incremental_ratio",
            "incremental: snapshot / git",
            ratios(incremental["ours"], incremental["git"]),
            "x",
        ),
        *sample_figures(
            "unchanged_ms",
            "snapshot, nothing changed",
            Samples([v * ms for v in unchanged.values]),
            "ms",
        ),
    ]
    emit(
        "Workspace snapshots: cost per input, against git add -A && git commit", figures, args.json
    )


if __name__ == "__main__":
    main()
