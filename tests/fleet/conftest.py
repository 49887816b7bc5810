"""A fleet for the tests: three real ``troupe serve`` processes on one real
PostgreSQL (tests/postgres.py), the scripted provider over loopback HTTP, and
clients that follow a session from node to node as a load balancer's clients
would: when their node goes away, they connect to another and subscribe from
their cursor.

Leases are short here (a TTL of 2 s, renewed every 0.4 s) so that a take-over
happens within a test; no test asserts how long anything took (the hang guards
are generous)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import trio

from protocol.client import TroupeClient, connect
from protocol.events import EPHEMERAL_KINDS
from protocol.wire import Event, SubscribeSession
from tests.wire.conftest import REPO

HANG_GUARD = 60
TTL = 2.0
RENEW = 0.4
TOKEN = "fleet-test-token-0123456789abcdef"


@dataclass
class Node:
    """One ``troupe serve`` of the fleet."""

    name: str
    data_dir: Path
    process: trio.Process
    url: str
    log: Path

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)

    def signal(self, number: int) -> None:
        self.process.send_signal(number)

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


async def start_node(
    root: Path, name: str, store: str, base_url: str, work: Path, *extra: str
) -> Node:
    data_dir = root / name
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "token").write_text(TOKEN + "\n")  # the fleet's one token
    os.chmod(data_dir / "token", 0o600)
    log = root / f"{name}.log"
    command = [
        sys.executable, "-m", "actors.cli", "serve", "--port", "0",
        "--data-dir", str(data_dir), "--workdir", str(work),
        "--base-url", base_url, "--api-key", "test-key", "--store", store,
        "--node-id", name, "--lease-ttl", str(TTL), "--lease-renew", str(RENEW), *extra,
    ]  # fmt: skip
    with log.open("wb") as errors:
        process = await trio.lowlevel.open_process(
            command, stdout=subprocess.PIPE, stderr=errors, cwd=REPO
        )
    assert process.stdout is not None
    printed = b""
    with trio.fail_after(HANG_GUARD):
        while b"\n" not in printed:
            chunk = await process.stdout.receive_some()
            assert chunk, f"troupe serve {name} exited: {log.read_text(errors='replace')}"
            printed += chunk
    url = printed.decode().splitlines()[0].rsplit(" ", 1)[-1]
    return Node(name, data_dir, process, url, log)


@asynccontextmanager
async def fleet(
    root: Path, store: str, base_url: str, count: int = 3, *extra: str
) -> AsyncIterator[list[Node]]:
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    nodes: list[Node] = []
    try:
        for number in range(1, count + 1):
            nodes.append(await start_node(root, f"n{number}", store, base_url, work, *extra))
        yield nodes
    finally:
        for node in nodes:
            if node.alive:
                with contextlib.suppress(ProcessLookupError):
                    node.process.send_signal(signal.SIGCONT)
                node.kill()
            with trio.CancelScope(shield=True), trio.move_on_after(HANG_GUARD):
                await node.process.wait()


def stored_seqs(url: str, session: str) -> list[tuple[int, str]]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT seq, kind FROM troupe.events WHERE session_id=%s ORDER BY seq", (session,)
        ).fetchall()
    return [(int(row[0]), str(row[1])) for row in rows]


def lease_of(url: str, session: str) -> tuple[str, int] | None:
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT node_id, epoch FROM troupe.session_leases WHERE session_id=%s", (session,)
        ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


@dataclass
class Follower:
    """A client that follows one session across nodes: subscribed at one node;
    when that node goes away, at the next live one, from its cursor."""

    session: str
    nodes: list[Node]
    encoding: str = "json"
    start: int = 0
    received: list[Event] = field(default_factory=list)
    reconnects: int = 0
    last_error: str = ""
    changed: trio.Event = field(default_factory=trio.Event)

    @property
    def cursor(self) -> int:
        seqs = [e.seq for e in self.received if e.seq > 0]
        return max(seqs, default=0)

    def durable(self) -> list[tuple[int, str]]:
        return [(e.seq, e.kind) for e in self.received if e.kind not in EPHEMERAL_KINDS and e.seq]

    async def run(self) -> None:
        index = self.start
        while True:
            node = self.nodes[index % len(self.nodes)]
            index += 1
            if not node.alive:
                continue
            try:
                async with connect(node.url, TOKEN, encoding=self.encoding) as client:  # type: ignore[arg-type]
                    await client.request(
                        SubscribeSession, session=self.session, after_seq=self.cursor
                    )
                    await self._read(client)
            except Exception as error:  # the node went away: the next one, from the cursor
                self.last_error = f"{node.name}: {type(error).__name__}: {error}"
            self.reconnects += 1
            await trio.sleep(0.05)

    async def _read(self, client: TroupeClient) -> None:
        async for event in client.events():
            if event.seq:
                self.received.append(event)
            changed, self.changed = self.changed, trio.Event()
            changed.set()

    async def wait_for(self, predicate: Any, what: str) -> None:
        with trio.move_on_after(HANG_GUARD):
            while not predicate(self):
                await self.changed.wait()
        assert predicate(self), (
            f"gave up waiting for {what} in {self.session} ({self.encoding}): saw "
            f"{[e.kind for e in self.received][-12:]}, {self.reconnects} reconnects, "
            f"last error {self.last_error!r}"
        )


def kinds_after(events: list[Event], seq: int) -> list[str]:
    return [e.kind for e in events if e.seq > seq]
