"""The command's own cost: how long a person waits before anything happens.

    python bench/cli.py          # a table
    python bench/cli.py --json   # one JSON object

Each figure is a ratio against a baseline measured in the same run, alternating
the two sides: ``python3 -c pass`` (the interpreter's own start) for
``troupe --version`` and ``troupe run --help``; and for a whole headless
``troupe run`` (embedded runtime, one model answer from ``troupe mock-llm`` in
another process), the same interpreter importing the runtime's modules and
exiting. Minimum and median of the repeats, in seconds and as ratios.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import Figure, emit, parse_args

PYTHON = sys.executable
TROUPE = [PYTHON, "-m", "actors.cli"]
IMPORTS = "import actors.commands.run, actors.server.server, protocol.client"


def _time(argv: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env, timeout=120)
    return time.perf_counter() - started


def _pair(subject: list[str], baseline: list[str], repeats: int, **env: str) -> tuple[list, list]:
    """Alternate both sides (one warm-up each), so the machine's load hits both alike."""
    import os

    environ = {**os.environ, **env} if env else None
    _time(subject, environ)
    _time(baseline, environ)
    subjects, baselines = [], []
    for _ in range(repeats):
        subjects.append(_time(subject, environ))
        baselines.append(_time(baseline, environ))
    return subjects, baselines


def _figures(key: str, label: str, subjects: list[float], baselines: list[float]) -> list[Figure]:
    return [
        Figure(f"{key}_min_s", f"{label}: min", min(subjects), "s"),
        Figure(f"{key}_median_s", f"{label}: median", statistics.median(subjects), "s"),
        Figure(f"{key}_ratio_min", f"{label} / baseline: min", min(subjects) / min(baselines), "x"),
        Figure(
            f"{key}_ratio_median",
            f"{label} / baseline: median",
            statistics.median(subjects) / statistics.median(baselines),
            "x",
        ),
    ]


def main() -> None:
    args = parse_args(__doc__ or "")
    repeats = 3 if args.quick else 9
    figures: list[Figure] = []
    bare = [PYTHON, "-c", "pass"]
    figures += _figures(
        "version", "troupe --version", *_pair([*TROUPE, "--version"], bare, repeats)
    )
    figures += _figures(
        "help", "troupe run --help", *_pair([*TROUPE, "run", "--help"], bare, repeats)
    )
    with tempfile.TemporaryDirectory() as directory:
        script = Path(directory) / "script.json"
        script.write_text('{"turns": [{"text": "done"}]}')
        mock = subprocess.Popen(
            [*TROUPE, "mock-llm", "--script", str(script)], stdout=subprocess.PIPE
        )
        try:
            assert mock.stdout is not None
            url = mock.stdout.readline().decode().strip()
            run = [*TROUPE, "run", "--embedded", "--base-url", url, "--output-format", "json", "x"]
            imports = [PYTHON, "-c", IMPORTS]
            pair = _pair(run, imports, repeats, TROUPE_DATA_DIR=str(Path(directory) / "data"))
            figures += _figures("run", "troupe run (embedded, one answer)", *pair)
            figures += [
                Figure(
                    "imports_median_s",
                    "baseline: import the runtime",
                    statistics.median(pair[1]),
                    "s",
                )
            ]
        finally:
            mock.terminate()
            mock.wait()
    emit("troupe command latency (the machine was shared; ratios matter)", figures, args.json)


if __name__ == "__main__":
    main()
