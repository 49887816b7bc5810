"""Fleet benchmark (issue 37), started: durable events per second into the store,
PostgreSQL against SQLite in the same run.

    python bench/fleet.py          # a table
    python bench/fleet.py --json   # one JSON object
    python bench/fleet.py --quick  # smaller counts

Each side runs the store as the server does (:func:`actors.store.open_store`:
events queued without waiting, one writer, one transaction per batch, in a
worker thread) until everything queued is committed. Events are spread over
``SESSIONS`` sessions, as a busy server's are. SQLite is ``troupe.db`` in WAL with
``synchronous=NORMAL`` (a commit survives the process being killed, not a power
loss); PostgreSQL is a private cluster (``initdb`` here, Unix socket) at its
defaults: each commit is flushed to disk (fsync on), a stronger promise that
costs a disk flush per batch. The sides alternate (ABBA) after a warm-up.

Not measured yet (they need session ownership across nodes): sessions started
per second across 3 nodes, and takeover time after SIGKILL.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0]).resolve() == ROOT / "bench":
    # Run as a script: bench/concurrent.py would hide the standard library's
    # concurrent package, which psycopg imports.
    sys.path[0] = str(ROOT)
else:
    sys.path.insert(0, str(ROOT))

from actors.store import open_store  # noqa: E402 (after the path is set)
from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures  # noqa: E402
from protocol.events import SessionEvent, WarningEvent  # noqa: E402
from tests.postgres import (  # noqa: E402
    PostgresCluster,
    PostgresUnavailable,
    remove_cluster,
    start_cluster,
)

SESSIONS = 50
EMIT_BATCH = 256
SMALL = "x" * 120
LARGE = "y" * 4000


def _events(count: int, payload: str) -> list[SessionEvent]:
    now = time.time()
    data = WarningEvent(payload)
    return [
        SessionEvent(f"s-{n % SESSIONS:08d}", n // SESSIONS + 1, now, data) for n in range(count)
    ]


async def _rate(data_dir: Path, store: str, events: list[SessionEvent]) -> float:
    async with open_store(data_dir, store) as opened:
        start = time.perf_counter()
        for index, event in enumerate(events, 1):
            opened.append_event(event)
            if index % EMIT_BATCH == 0:
                await trio.lowlevel.checkpoint()
        await opened.flush()
        elapsed = time.perf_counter() - start
    return len(events) / elapsed


def sqlite_rate(events: list[SessionEvent]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return trio.run(_rate, Path(tmp), "", events)


def postgres_rate(cluster: PostgresCluster, events: list[SessionEvent]) -> float:
    url = cluster.create_database()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return trio.run(_rate, Path(tmp), url, events)
    finally:
        cluster.drop_database(url)


def measure(quick: bool) -> list[Figure]:
    count = 5_000 if quick else 40_000
    repeats = 3 if quick else 5
    try:
        cluster = start_cluster(durable=True)
    except PostgresUnavailable as reason:
        raise SystemExit(f"bench/fleet.py needs PostgreSQL: {reason}") from None
    try:
        small, large = _events(count, SMALL), _events(count // 4, LARGE)
        samples = compare(
            {
                "sqlite": lambda: sqlite_rate(small),
                "postgres": lambda: postgres_rate(cluster, small),
                "sqlite_large": lambda: sqlite_rate(large),
                "postgres_large": lambda: postgres_rate(cluster, large),
            },
            repeats,
        )
    finally:
        remove_cluster(cluster)
    ratio = ratios(samples["postgres"], samples["sqlite"])
    ratio_large = ratios(samples["postgres_large"], samples["sqlite_large"])
    return [
        Figure("events", "events per run (120-byte events)", count, ""),
        Figure("sessions", "sessions they are spread over", SESSIONS, ""),
        Figure("repeats", "repeats per side (alternating, after a warm-up)", repeats, ""),
        *sample_figures("sqlite_events_per_s", "SQLite durable events/s", samples["sqlite"], "/s"),
        *sample_figures("postgres_events_per_s", "PostgreSQL durable events/s",
                        samples["postgres"], "/s"),
        Figure("postgres_to_sqlite", "  PostgreSQL / SQLite (median)", ratio.median, "x"),
        *sample_figures("sqlite_large_events_per_s", "SQLite durable events/s, 4 KB each",
                        samples["sqlite_large"], "/s"),
        *sample_figures("postgres_large_events_per_s", "PostgreSQL durable events/s, 4 KB each",
                        samples["postgres_large"], "/s"),
        Figure("postgres_to_sqlite_large", "  PostgreSQL / SQLite, 4 KB (median)",
               ratio_large.median, "x"),
    ]  # fmt: skip


def main() -> None:
    args = parse_args(__doc__ or "", sys.argv[1:])
    figures = measure(args.quick)
    emit("Troupe fleet: the store", figures, args.json)


if __name__ == "__main__":
    main()
