"""Fleet benchmark (issue 37): durable events per second into the store,
PostgreSQL against SQLite in the same run; sessions started per second across
three ``troupe serve`` nodes on one PostgreSQL, and the memory each idle session
holds on its node; the time a surviving node takes to own a SIGKILLed node's
sessions.

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

Session starts: three real ``troupe serve`` processes on one database of that
cluster, each with its own data directory, as three machines would be. Clients
(this process, ``CONCURRENCY`` requests in flight on one WebSocket per node) send
``create_session`` to every node at once; the figure is the wall time from the
first request to the last reply, for ``NODES * PER_NODE`` sessions. No session
gets input, so the scripted provider is never called. Memory per idle session is
each node's resident set (``VmRSS``) after its sessions, less before them (after
a warm-up of a few), over their count: what the operating system gives the
process, so it includes the allocator's slack, unlike a tracemalloc count.
On a shared machine the wall time says as much about the neighbours as about
Troupe: the CPU each side used per session (the nodes, PostgreSQL, this client)
is reported too, and their sum over the cores is the floor the wall time would
reach on an idle machine; the load average before and after is printed.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
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
from protocol.client import connect  # noqa: E402
from protocol.events import SessionEvent, WarningEvent  # noqa: E402
from protocol.wire import CreateSession  # noqa: E402
from tests.postgres import (  # noqa: E402
    PostgresCluster,
    PostgresUnavailable,
    remove_cluster,
    start_cluster,
)

SESSIONS = 50
NODES = 3
PER_NODE = 10_000
CONCURRENCY = 64
"""Requests in flight per node: enough to keep a node busy while a reply travels."""
WARM_UP = 200
"""Sessions each node starts before the measured run (imports, caches, first rows)."""
TARGET_START_SECONDS = 15.0
TARGET_BYTES = 30 * 1024
CORES = os.cpu_count() or 1
UNUSED_URL = "http://127.0.0.1:9"
"""Nothing listens there: no session here makes a model call."""
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


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu(cluster: PostgresCluster) -> float:
    """CPU seconds of the cluster's postmaster and its children (its backends)."""
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(entry.name) == postmaster or int(fields[1]) == postmaster:
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return total


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Starts:
    """What starting the sessions took: wall time, CPU by side, memory by node."""

    seconds: float
    server_cpu: float
    postgres_cpu: float
    client_cpu: float
    bytes_per_session: list[float]


@dataclass(frozen=True)
class Node:
    """One ``troupe serve`` process: its URL, token and pid."""

    process: subprocess.Popen[bytes]
    url: str
    token: str

    def cpu(self) -> float:
        return cpu_seconds(self.process.pid)

    def rss(self) -> int:
        """The process's resident set, in bytes."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"no VmRSS for pid {self.process.pid}")


@contextmanager
def serve_node(root: Path, store: str, name: str) -> Iterator[Node]:
    """``troupe serve`` on a free port with a data directory of its own; stopped
    (SIGTERM, then SIGKILL) on the way out."""
    data_dir, work = root / name / "data", root / name / "work"
    work.mkdir(parents=True)
    command = [
        sys.executable, "-m", "actors.cli", "serve", "--port", "0", "--data-dir", str(data_dir),
        "--workdir", str(work), "--base-url", UNUSED_URL, "--api-key", "bench-key",
        "--store", store,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert process.stdout is not None
        first = process.stdout.readline().decode()
        if not first:
            raise SystemExit(f"troupe serve ({name}) exited: {process.wait()}")
        token = (data_dir / "token").read_text().strip()
        yield Node(process, first.split()[-1], token)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _create_sessions(node: Node, count: int) -> None:
    async with connect(node.url, node.token) as client:
        remaining = iter(range(count))

        async def worker() -> None:
            for _ in remaining:
                await client.request(CreateSession)

        async with trio.open_nursery() as nursery:
            for _ in range(min(CONCURRENCY, count)):
                nursery.start_soon(worker)


async def _start_everywhere(nodes: list[Node], per_node: int) -> float:
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for node in nodes:
            nursery.start_soon(_create_sessions, node, per_node)
    return time.perf_counter() - start


def session_starts(cluster: PostgresCluster, per_node: int) -> Starts:
    """``NODES`` nodes on one database start ``per_node`` sessions each, all at
    once: the wall time, the CPU each side used, each node's resident bytes per
    idle session."""
    url = cluster.create_database()
    try:
        with tempfile.TemporaryDirectory() as tmp, ExitStack() as nodes_open:
            nodes = [
                nodes_open.enter_context(serve_node(Path(tmp), url, f"node{n}"))
                for n in range(NODES)
            ]
            trio.run(_start_everywhere, nodes, WARM_UP)
            before = [node.rss() for node in nodes]
            cpu = (sum(node.cpu() for node in nodes), postgres_cpu(cluster), own_cpu())
            seconds = trio.run(_start_everywhere, nodes, per_node)
            server, database, client = (
                sum(node.cpu() for node in nodes) - cpu[0],
                postgres_cpu(cluster) - cpu[1],
                own_cpu() - cpu[2],
            )
            per_session = [
                (node.rss() - rss) / per_node for node, rss in zip(nodes, before, strict=True)
            ]
            return Starts(seconds, server, database, client, per_session)
    finally:
        cluster.drop_database(url)


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


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
        load_before = load_average()[0]
        per_node = 1_000 if quick else PER_NODE
        starts = session_starts(cluster, per_node)
        load_after = load_average()[0]
    finally:
        remove_cluster(cluster)
    started = NODES * per_node
    full = per_node == PER_NODE
    worst = max(starts.bytes_per_session)
    start_seconds = starts.seconds
    cpu_ms = {
        "server": starts.server_cpu, "postgres": starts.postgres_cpu, "client": starts.client_cpu
    }  # fmt: skip
    cpu_total = sum(cpu_ms.values())
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
        Figure("nodes", "troupe serve nodes on one PostgreSQL", NODES, ""),
        Figure("sessions_started", "sessions started across the nodes", started, ""),
        Figure("sessions_start_s", "  wall time, first request to last reply", start_seconds,
               "s", f"< {TARGET_START_SECONDS:g}" if full else "",
               start_seconds < TARGET_START_SECONDS if full else None),
        Figure("sessions_per_s", "  sessions started per second", started / start_seconds, "/s"),
        *[Figure(f"{side}_cpu_ms_per_session", f"  CPU per session start: {side}",
                 1000 * seconds / started, "ms") for side, seconds in cpu_ms.items()],
        Figure("cpu_bound_start_s", f"  all that CPU spread over {CORES} cores (a floor)",
               cpu_total / CORES, "s"),
        *[Figure(f"node{n}_bytes_per_session", f"  node {n}: RSS growth per idle session",
                 value, "B") for n, value in enumerate(starts.bytes_per_session)],
        Figure("bytes_per_session", "  worst node: RSS growth per idle session", worst, "B",
               f"< {TARGET_BYTES}", worst < TARGET_BYTES),
        Figure("load_before", "1-minute load average before the session starts", load_before,
               ""),
        Figure("load_after", "1-minute load average after them", load_after, ""),
    ]  # fmt: skip


def main() -> None:
    args = parse_args(__doc__ or "", sys.argv[1:])
    figures = measure(args.quick)
    emit("Troupe fleet: the store", figures, args.json)


if __name__ == "__main__":
    main()
