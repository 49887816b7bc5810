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
(this process: a blocking client thread per node, ``CONCURRENCY`` requests in
flight on its WebSocket, one ``create_session`` per session) send to every node
at once; the figure is the wall time from the
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

import contextlib
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio
import trio.lowlevel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from actors.store import open_store  # noqa: E402 (after the path is set)
from bench.report import Figure, compare, emit, parse_args, ratios, sample_figures  # noqa: E402
from protocol.client import RequestError, connect  # noqa: E402
from protocol.client_blocking import connect as blocking_connect  # noqa: E402
from protocol.events import SessionEvent, WarningEvent  # noqa: E402
from protocol.wire import (  # noqa: E402
    CreateSession,
    InterruptSession,
    ServerDecoder,
    SessionCreated,
    SubmitInput,
    SubscribeSession,
    encode_client,
)
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
REPLY_TIMEOUT = 120.0
"""A hang guard: seconds a client waits for the next reply."""
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
    node_cpu: list[float]
    """Each node's CPU seconds for its sessions."""


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


def _serve_command(data_dir: Path, work: Path, store: str, base_url: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "actors.cli", "serve", "--port", "0", "--data-dir", str(data_dir),
        "--workdir", str(work), "--base-url", base_url, "--api-key", "bench-key",
        "--store", store, *extra,
    ]  # fmt: skip


def _started(process: subprocess.Popen[bytes], name: str) -> str:
    """The URL ``troupe serve`` printed first."""
    assert process.stdout is not None
    first = process.stdout.readline().decode()
    if not first:
        raise SystemExit(f"troupe serve ({name}) exited: {process.wait()}")
    return first.split()[-1]


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def serve_node(root: Path, store: str, name: str) -> Iterator[Node]:
    """``troupe serve`` on a free port with a data directory of its own; stopped
    (SIGTERM, then SIGKILL) on the way out."""
    data_dir, work = root / name / "data", root / name / "work"
    work.mkdir(parents=True)
    command = _serve_command(data_dir, work, store, UNUSED_URL)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        url = _started(process, name)
        yield Node(process, url, (data_dir / "token").read_text().strip())
    finally:
        _stop(process)


def _create_sessions(node: Node, count: int) -> None:
    """``count`` sessions on ``node``, one ``create_session`` each, ``CONCURRENCY``
    in flight on one connection: a request goes out as soon as a reply frees its
    place. A blocking client (:mod:`protocol.client_blocking`'s connection): the
    load generator costs little next to the nodes it measures, where an event loop
    spent more per request than the node it asked."""
    client = blocking_connect(node.url, node.token, client="troupe-bench")
    try:
        websocket, decoder = client.websocket, ServerDecoder("json")
        waiting: set[int] = set()
        sent = 0
        while sent < count or waiting:
            while sent < count and len(waiting) < CONCURRENCY:
                sent += 1
                waiting.add(sent)
                websocket.send(encode_client(CreateSession(id=sent), "json"))
            frame = decoder.decode(websocket.receive(timeout=REPLY_TIMEOUT))
            if not isinstance(frame, SessionCreated) or frame.id not in waiting:
                raise SystemExit(f"create_session on {node.url}: unexpected reply {frame!r}")
            waiting.remove(frame.id)
    finally:
        client.close()


def _start_everywhere(nodes: list[Node], per_node: int) -> float:
    """Every node starts ``per_node`` sessions at once (one client thread each); the
    wall time from the first request to the last reply."""
    start = time.perf_counter()
    with ThreadPoolExecutor(len(nodes)) as clients:
        for done in [clients.submit(_create_sessions, node, per_node) for node in nodes]:
            done.result()
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
            _start_everywhere(nodes, WARM_UP)
            before = [node.rss() for node in nodes]
            each = [node.cpu() for node in nodes]
            cpu = (sum(each), postgres_cpu(cluster), own_cpu())
            seconds = _start_everywhere(nodes, per_node)
            node_cpu = [node.cpu() - was for node, was in zip(nodes, each, strict=True)]
            server, database, client = (
                sum(node_cpu),
                postgres_cpu(cluster) - cpu[1],
                own_cpu() - cpu[2],
            )
            per_session = [
                (node.rss() - rss) / per_node for node, rss in zip(nodes, before, strict=True)
            ]
            return Starts(seconds, server, database, client, per_session, node_cpu)
    finally:
        cluster.drop_database(url)


# -- take-over after SIGKILL ------------------------------------------------------------

FLEET_TOKEN = "fleet-bench-token-0123456789abcdef"
"""The fleet's one token, in every node's data directory (docs/deploy.md)."""
TAKEOVER_ROUNDS = 20
RUNNING_PER_ROUND = 2
"""Sessions with an input running on the node that is killed."""
POLL = 0.02
"""Seconds between two looks at the lease rows: the figures' resolution."""


def fleet_supported() -> bool:
    """Whether this tree's ``troupe serve`` is a fleet node (it has leases)."""
    done = subprocess.run(
        [sys.executable, "-m", "actors.cli", "serve", "--help"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    return "--lease-ttl" in done.stdout


class FleetNodes:
    """Three restartable ``troupe serve`` nodes on one database, one token."""

    def __init__(self, root: Path, store: str, base_url: str, lease: tuple[str, ...]) -> None:
        self.root, self.store, self.base_url, self.lease = root, store, base_url, lease
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.urls: dict[str, str] = {}

    def start(self, name: str) -> None:
        data_dir, work = self.root / name / "data", self.root / "work"
        work.mkdir(parents=True, exist_ok=True)
        data_dir.mkdir(parents=True, exist_ok=True)
        token = data_dir / "token"
        token.write_text(FLEET_TOKEN + "\n")
        token.chmod(0o600)
        command = _serve_command(
            data_dir, work, self.store, self.base_url, "--node-id", name, *self.lease
        )
        self.processes[name] = process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
        )
        self.urls[name] = _started(process, name)

    def kill(self, name: str) -> None:
        process = self.processes.pop(name)
        process.kill()
        process.wait()

    def stop_all(self) -> None:
        for process in self.processes.values():
            _stop(process)
        self.processes.clear()


def _owners(url: str, sessions: list[str]) -> list[str]:
    import psycopg

    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT node_id FROM troupe.session_leases WHERE session_id = ANY(%s)", (sessions,)
        ).fetchall()
    return [str(row[0]) for row in rows]


async def _running_on(url: str, sessions: int) -> list[str]:
    """Sessions started on the node at ``url``, each with an input running a tool."""
    async with connect(url, FLEET_TOKEN) as client:
        started = [
            (await client.request(CreateSession)).session.session_id for _ in range(sessions)
        ]
        for session in started:
            await client.request(SubscribeSession, session=session, after_seq=0)
            await client.request(SubmitInput, session=session, text="keep going")
        running: set[str] = set()
        with trio.fail_after(120):
            async for event in client.events():
                if event.kind == "tool_call_start":
                    running.add(event.session)
                    if running == set(started):
                        return started
    raise RuntimeError("the connection ended before the inputs ran")


async def _interrupt(url: str, sessions: list[str]) -> None:
    """End the taken-over inputs (through a surviving node), so rounds do not pile up."""
    async with connect(url, FLEET_TOKEN) as client:
        for session in sessions:
            with contextlib.suppress(RequestError):
                await client.request(InterruptSession, session=session, immediate=True)


async def _takeovers(cluster: PostgresCluster, rounds: int, lease: tuple[str, ...]) -> list[float]:
    """Seconds from SIGKILL of a node with running inputs until every one of its
    sessions is owned by another node (read from the lease rows every ``POLL``)."""
    from actors.mockllm import Script, serve_mock_llm

    turn = {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 0.2; echo step"}}]}
    script = msgspec.convert({"turns": [turn], "repeat": True}, Script)
    names = [f"node{n}" for n in range(NODES)]
    chance = random.Random(37)
    url = cluster.create_database()
    times: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with serve_mock_llm(script) as mock:
                nodes = FleetNodes(Path(tmp), url, mock.base_url, lease)
                try:
                    for name in names:
                        await trio.to_thread.run_sync(nodes.start, name)
                    for number in range(rounds):
                        victim = names[number % NODES]
                        sessions = await _running_on(nodes.urls[victim], RUNNING_PER_ROUND)
                        await trio.sleep(chance.uniform(0, 1.0))  # a random moment
                        killed = time.perf_counter()
                        nodes.kill(victim)
                        while True:
                            owners = await trio.to_thread.run_sync(_owners, url, sessions)
                            if len(owners) == len(sessions) and victim not in owners:
                                break
                            await trio.sleep(POLL)
                        times.append(time.perf_counter() - killed)
                        survivor = next(n for n in names if n != victim)
                        await _interrupt(nodes.urls[survivor], sessions)
                        await trio.to_thread.run_sync(nodes.start, victim)
                finally:
                    nodes.stop_all()
    finally:
        cluster.drop_database(url)
    return times


DEFAULT_TTL = 10.0
"""``troupe serve``'s lease TTL when none is given (docs/deploy.md)."""


def takeover_figures(times: list[float], ttl: float, measured: bool) -> list[Figure]:
    if not measured:
        return [
            Figure(
                "takeover_not_measured",
                "take-over after SIGKILL: not measured (takeover not merged)",
                0,
                "",
            )
        ]
    return [
        Figure("takeover_rounds", "take-over after SIGKILL: rounds (a node killed each)",
               len(times), ""),
        Figure("takeover_ttl_s", "  lease TTL", ttl, "s"),
        Figure("takeover_median_s", "  SIGKILL to owned by another node (median)",
               statistics.median(times), "s", f"< {ttl + 2:g} (TTL + 2 s)",
               statistics.median(times) < ttl + 2),
        Figure("takeover_max_s", "  SIGKILL to owned by another node (max)", max(times), "s",
               f"< {ttl + 2:g} (TTL + 2 s)", max(times) < ttl + 2),
    ]  # fmt: skip


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
        takeover = fleet_supported()
        rounds = 3 if quick else TAKEOVER_ROUNDS
        lease = ("--lease-ttl", "2", "--lease-renew", "0.4") if quick else ()
        times = trio.run(_takeovers, cluster, rounds, lease) if takeover else []
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
        *[Figure(f"node{n}_cpu_ms_per_session", f"  CPU per session start: node {n}",
                 1000 * seconds / per_node, "ms") for n, seconds in enumerate(starts.node_cpu)],
        Figure("cpu_bound_start_s", f"  all that CPU spread over {CORES} cores (a floor: the "
               "wall time on an idle machine)", cpu_total / CORES, "s",
               f"< {TARGET_START_SECONDS:g}" if full else "",
               cpu_total / CORES < TARGET_START_SECONDS if full else None),
        *[Figure(f"node{n}_bytes_per_session", f"  node {n}: RSS growth per idle session",
                 value, "B") for n, value in enumerate(starts.bytes_per_session)],
        Figure("bytes_per_session", "  worst node: RSS growth per idle session", worst, "B",
               f"< {TARGET_BYTES}", worst < TARGET_BYTES),
        *takeover_figures(times, 2.0 if quick else DEFAULT_TTL, takeover),
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
