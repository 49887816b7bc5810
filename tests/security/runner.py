# ruff: noqa: E501, ASYNC110, ASYNC221, ASYNC240  (test harness: tables of paths; it polls files a background process writes and sets up before the server runs)
"""Runs the corpus live: ``troupe serve`` as a real process (fake HOME, secret
variables in its environment, a pids cgroup around it), the scripted provider over
loopback HTTP, one loopback listener per network row, and a client that answers
every approval "no" (except the steps a row grants with ``always``).

Afterwards each row gets its findings: an outside file of its own changed, a
secret in a tool result, a listener reached, an approval granted that the client
did not grant, a plant fired by the next session, ``troupe run`` or the user's git.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import TroupeClient, connect
from protocol.session import SessionConfig
from protocol.wire import (
    AddSSHEnvironment,
    CreateSession,
    ResolveApproval,
    SubmitInput,
    SubscribeSession,
)
from tests.environments.sshd import REMOTE_SECRET
from tests.security.rows import Row
from tests.security.world import KEY, SECRET_ENV, World, changed

REPO = Path(__file__).resolve().parents[2]
BATCH_SIZE = 24
CONCURRENT = 8
SESSION_GUARD = 240
PIDS_CGROUP = Path("/sys/fs/cgroup/pids")


@dataclass
class CallLog:
    tool: str = ""
    output: str = ""
    is_error: bool = False
    ended: bool = False
    decisions: list[dict[str, Any]] = field(default_factory=list)
    asked: int = 0


@dataclass
class Outcome:
    """What the harness saw of one row, and what is wrong with it."""

    row: Row
    calls: dict[str, CallLog] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)

    def step_calls(self, step: int) -> list[CallLog]:
        prefix = f"{self.row.key}s{step % len(self.row.steps)}c"
        return [log for cid, log in self.calls.items() if cid.startswith(prefix)]


@dataclass
class Run:
    """The result of one corpus run under one setting."""

    setting: str
    outcomes: dict[str, Outcome]
    unattributed: list[str]
    seconds: float
    approvals_granted_inside: int = 0
    asks: int = 0
    create_lock: trio.Lock = field(default_factory=trio.Lock)
    ssh: Any = None
    batch_seconds: dict[str, float] = field(default_factory=dict)
    troupe_runs: trio.Semaphore = field(default_factory=lambda: trio.Semaphore(3))
    """The test sshd (tests/environments/sshd.py) when the rows run on an SSH host."""


def fill(value: Any, row: Row, world: World, ws: Path, port: int) -> Any:
    if isinstance(value, str):
        for token, text in (("@KEY@", row.key), ("@OUT@", str(world.outside)),
                            ("@HOME@", str(world.home)), ("@DATA@", str(world.data_dir)),
                            ("@WS@", str(ws)), ("@ROOTNAME@", world.root.name),
                            ("@ROOT@", str(world.root)), ("@PORT@", str(port)),
                            ("@PY@", sys.executable)):  # fmt: skip
            value = value.replace(token, text)
        return value
    if isinstance(value, dict):
        return {k: fill(v, row, world, ws, port) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [fill(v, row, world, ws, port) for v in value]
    return value


@dataclass
class Batch:
    name: str
    rows: list[Row]

    @property
    def match(self) -> str:
        return f"BATCH::{self.name}::"


def batches_of(rows: list[Row]) -> list[Batch]:
    out: list[Batch] = []
    shared: dict[str, list[Row]] = {}
    for row in rows:
        if row.isolate:
            out.append(Batch(row.key, [row]))
        else:
            shared.setdefault(row.cls, []).append(row)
    for cls, members in shared.items():
        for start in range(0, len(members), BATCH_SIZE):
            out.append(Batch(f"{cls}{start // BATCH_SIZE}", members[start : start + BATCH_SIZE]))
    return out


class Listeners:
    """One loopback listener per row; what each received."""

    def __init__(self) -> None:
        self.received: dict[str, bytes] = {}
        self.connections: dict[str, int] = {}
        self.ports: dict[str, int] = {}

    async def open(self, nursery: trio.Nursery, key: str) -> int:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        self.ports[key] = port
        self.received[key] = b""
        self.connections[key] = 0

        async def handle(stream: trio.SocketStream) -> None:
            self.connections[key] += 1
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                while True:
                    chunk = b""
                    with trio.move_on_after(2):
                        chunk = await stream.receive_some(65536)
                    if not chunk:  # closed, or idle for 2 s
                        break
                    self.received[key] += chunk
                    if b"\r\n\r\n" in self.received[key]:
                        with contextlib.suppress(trio.BrokenResourceError):
                            await stream.send_all(b"HTTP/1.0 404 Not Found\r\n\r\n")
            await stream.aclose()

        nursery.start_soon(trio.serve_listeners, handle, listeners)
        return port


def script_for(batches: list[Batch], world: World, listeners: Listeners) -> Script:
    conversations: list[dict[str, Any]] = []
    for batch in batches:
        ws = world.workspace(batch.name)
        turns: list[dict[str, Any]] = []
        for row in batch.rows:
            port = listeners.ports.get(row.key, 9)
            for s, step in enumerate(row.steps):
                calls = [{"id": f"{row.key}s{s}c{i}", "name": call.tool,
                          "arguments": fill(call.arguments, row, world, ws, port)}
                         for i, call in enumerate(step)]  # fmt: skip
                turns.append({"tool_calls": calls})
            if row.subagent:
                sub_turns: list[dict[str, Any]] = [{"tool_calls": [{"name": c.tool, "arguments": fill(c.arguments, row, world, ws, port)}
                                             for c in sub]} for sub in row.subagent]  # fmt: skip
                sub_turns.append({"text": "subtask done"})
                conversations.append({"match": f"SUBTASK::{row.key}", "turns": sub_turns})
        turns.append({"text": "batch done"})
        conversations.append({"match": batch.match, "turns": turns})
        follow: list[dict[str, Any]] = [{"tool_calls": [{"id": f"follow{i}", "name": fill(t, row, world, ws, 9), "arguments": {}}]}
                  for row in batch.rows for i, t in enumerate(row.trigger_tools)]  # fmt: skip
        follow.append({"text": "follow done"})
        conversations.append({"match": f"FOLLOW::{batch.name}::", "turns": follow})
        conversations.append({"match": f"FOLLOWRUN::{batch.name}::", "turns": [{"text": "ok"}]})
    return msgspec.convert(
        {"conversations": conversations, "turns": [{"text": "unscripted"}], "delta_size": 65536},
        Script,
    )


@contextlib.asynccontextmanager
async def pids_cgroup(limit: int = 1500):
    """A pids cgroup (v1) for Troupe and everything it starts, so a fork bomb that
    runs unasked stops at ``limit``; None where the machine has none."""
    path = PIDS_CGROUP / f"troupe-sec-{os.getpid()}-{time.monotonic_ns()}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
    except OSError:
        yield None
        return
    try:
        yield path
    finally:
        for _ in range(50):
            pids = [p for p in (path / "cgroup.procs").read_text().split() if p]
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), 9)
            await trio.sleep(0.1)  # waiting for the kernel to reap them
        with contextlib.suppress(OSError):
            path.rmdir()


def cgroup_available() -> bool:
    return os.access(PIDS_CGROUP, os.W_OK)


@contextlib.asynccontextmanager
async def troupe_serve(world: World, workdir: Path, cgroup: Path | None):
    """``troupe serve`` as its own process, with the world's environment; yields
    (url, token)."""
    command = [
        sys.executable,
        "-m",
        "actors.cli",
        "serve",
        "--port",
        "0",
        "--workdir",
        str(workdir),
    ]

    def enter_cgroup() -> None:
        if cgroup is not None:
            (cgroup / "cgroup.procs").write_text("0")

    process = await trio.lowlevel.open_process(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO, env=world.env(),
        preexec_fn=enter_cgroup, start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        printed = b""
        with trio.fail_after(60):
            while b"\n" not in printed:
                chunk = await process.stdout.receive_some()
                assert chunk, f"troupe serve exited: {process.returncode}"
                printed += chunk
        url = printed.decode().splitlines()[0].rsplit(" ", 1)[-1]
        token = (world.data_dir / "token").read_text().strip()
        yield url, token
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 15)
        with trio.move_on_after(15) as slow:
            await process.wait()
        if slow.cancelled_caught:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            await process.wait()


async def _wait_for_file(path: Path, seconds: float) -> None:
    with trio.move_on_after(seconds):
        while not path.exists():
            await trio.sleep(0.05)  # polling a file a background process writes


async def drive(client: TroupeClient, session: str, text: str, outcomes: dict[str, Outcome],
                rows: dict[str, Row], world: World, ws: Path, run: Run) -> None:  # fmt: skip
    """Submit ``text``, answer every approval, record every call, until processing_end."""
    await client.request(SubscribeSession, session=session, after_seq=0)
    await client.request(SubmitInput, session=session, text=text)
    current: str | None = None
    granted: set[str] = set()
    with trio.fail_after(SESSION_GUARD):
        async for event in client.events():
            data = event.data
            kind = event.kind
            call_id = data.get("call_id", "") if isinstance(data, dict) else ""
            key = call_id[:4] if KEY.fullmatch(call_id[:4] or "x") else None
            log = outcomes[key].calls.setdefault(call_id, CallLog()) if key in outcomes else None
            if kind == "tool_call_start":
                current = call_id
                if log is not None:
                    log.tool = data["tool_name"]
            elif kind == "tool_call_end" and log is not None:
                log.output, log.is_error, log.ended = data["output"], data["is_error"], True
            elif kind == "policy_decision" and log is not None:
                log.decisions.append(data)
            elif kind == "approval_request":
                run.asks += 1
                approve = False
                if current and current[:4] in outcomes:
                    row = rows[current[:4]]
                    outcomes[row.key].calls.setdefault(current, CallLog()).asked += 1
                    step = int(current[5:].split("c")[0])
                    approve = step in row.approve
                    if row.wait_file:
                        await _wait_for_file(ws / row.wait_file.replace("@KEY@", row.key), 15)
                if approve:
                    granted.add(data["request_id"])
                with contextlib.suppress(Exception):  # already answered from elsewhere
                    await client.request(ResolveApproval, session=session,
                                         request_id=data["request_id"], approved=approve,
                                         message=None if approve else "no",
                                         scope="command" if approve else "once")  # fmt: skip
            elif kind == "approval_resolved":
                if data["approved"] and data["request_id"] not in granted:
                    run.approvals_granted_inside += 1
                    if current and current[:4] in outcomes:
                        outcomes[current[:4]].findings.append(
                            f"approval {data['request_id']} granted by someone else ({data.get('by')})"
                        )
            elif kind in ("processing_end", "session_end"):
                return


def session_config(setting: str, approval_timeout_s: float = 8.0) -> SessionConfig:
    """The session's settings: the default policy (``sandbox = "off"`` laid over it
    for that run). The client answers every question at once; the timeout only ends
    the questions of subagents, whose sessions it does not watch (a denial)."""
    overrides: dict[str, Any] = {"approval_timeout_s": approval_timeout_s}
    if setting == "sandbox-off":
        overrides["sandbox"] = "off"
    elif setting == "permissive":
        # Everything allowed, the world's secret variables too (else no command
        # could show one, and the harness could not prove it sees such a leak).
        overrides = {"approval_timeout_s": approval_timeout_s, "sandbox": "off", "admin": "allow",
                     "allowed_paths": ["/"], "denied_paths": [], "env": "allowlist",
                     "env_allow": list(SECRET_ENV)}  # fmt: skip
    return SessionConfig(policy="permissive" if setting == "permissive" else "interactive",
                         policy_overrides=overrides, enable_loop_detection=False,
                         default_command_timeout_ms=8000, max_subagent_depth=1)  # fmt: skip


async def run_batch(url: str, token: str, batch: Batch, setting: str, outcomes: dict[str, Outcome],
                    world: World, run: Run, limit: trio.Semaphore) -> None:  # fmt: skip
    ws = world.workspace(batch.name)
    rows = {row.key: row for row in batch.rows}
    started = time.monotonic()
    async with limit, connect(url, token) as client:
        config = session_config(setting, 30.0 if any(r.wait_file for r in batch.rows) else 8.0)
        async with run.create_lock:  # concurrent creates race for an address (see report)
            if run.ssh is None:
                created = await client.request(CreateSession, working_dir=str(ws), config=config)
            else:
                name = f"b-{batch.name}"
                await client.request(AddSSHEnvironment, name=name, working_dir=str(ws),
                                     target=f"ssh://root@127.0.0.1:{run.ssh.port}",
                                     known_hosts=str(run.ssh.known_hosts),
                                     client_keys=[str(run.ssh.client_key)])  # fmt: skip
                created = await client.request(CreateSession, environment=f"/environments/ssh/{name}",
                                               config=config)  # fmt: skip
        await drive(
            client, created.session.session_id, f"{batch.match} go", outcomes, rows, world, ws, run
        )
    run.batch_seconds[batch.name] = round(time.monotonic() - started, 1)


async def fire_plants(url: str, token: str, batch: Batch, setting: str, outcomes: dict[str, Outcome],
                      world: World, run: Run, mock_url: str) -> None:  # fmt: skip
    """What would run a plant later: a fresh session in the same directory (its git
    probe, its tools), ``troupe run`` there, and the user's own git."""
    ws = world.workspace(batch.name)
    rows = {row.key: row for row in batch.rows}
    notes = world.root / "harness" / f"fire-{batch.name}.log"
    try:  # a session that cannot start fires nothing
        async with connect(url, token) as client:
            async with run.create_lock:
                created = await client.request(
                    CreateSession, working_dir=str(ws), config=session_config(setting)
                )
            await drive(client, created.session.session_id, f"FOLLOW::{batch.name}:: go",
                        outcomes, rows, world, ws, run)  # fmt: skip
    except Exception as error:  # kept for a person reading a failure
        notes.write_text(f"the next session failed: {error!r}\n")
    troupe_files = (ws / ".troupe").exists() or (world.root / ".troupe").exists()
    global_too = any("home/.gitconfig" in r.targets for r in batch.rows)
    if troupe_files or world.git_config_changed(batch.name, global_too):
        await troupe_run_again(batch, world, ws, notes, run)
    if setting == "sandbox-off":
        return  # with the sandbox off, only Troupe's own later actions are promised safe
    # (permissive, the harness's self-test, runs the user's git too: a plant must show)
    user = world.user_env()
    for args in (["status"], ["diff"], ["commit", "-qam", "later"], ["checkout", "-q", "-b", "later"],
                 ["log", "-1"]):  # fmt: skip
        (ws / "README.md").open("a").write("edit\n")
        with trio.move_on_after(30):
            await trio.run_process(["git", *args], cwd=ws, env=user, check=False,
                                   capture_stdout=True, capture_stderr=True,
                                   stdin=b"")  # fmt: skip


async def troupe_run_again(batch: Batch, world: World, ws: Path, notes: Path, run: Run) -> None:
    """``troupe run`` in the workspace, as the user would next: it reads the
    project's ``.troupe/`` (MCP servers, base_url, tools) and probes git (a session
    of the running server may reuse an earlier probe). A few at a time: each is a
    Python start, and this machine has two cores."""
    command = [sys.executable, "-m", "actors.cli", "run", "--embedded", "--workdir", str(ws),
               "--data-dir", str(world.root / "rundata" / batch.name), f"FOLLOWRUN::{batch.name}:: go"]  # fmt: skip
    env = {**world.env(), "TROUPE_CONFIG": str(world.root / "harness" / "config.toml")}
    async with run.troupe_runs:
        with trio.move_on_after(180) as slow:
            done = await trio.run_process(command, cwd=REPO, env=env, check=False, capture_stdout=True,
                                          capture_stderr=True, stdin=b"")  # fmt: skip
            log = world.root / "harness" / f"run-{batch.name}.log"
            log.write_bytes(done.stdout + done.stderr)  # for a person reading a failure
    if slow.cancelled_caught:
        notes.write_text("troupe run did not end in 180 s\n")
        run.unattributed.append(f"troupe run in ws-{batch.name} did not end (harness)")


def trust_workspaces(world: World, workspaces: list[Path]) -> None:
    """What ``troupe trust`` would write for these directories, in the world's HOME
    (a project's own ``.troupe`` settings take effect only once it is trusted)."""
    trust = world.home / ".config" / "troupe" / "trusted-projects.json"
    trust.parent.mkdir(parents=True, exist_ok=True)
    listed = [os.path.realpath(ws) for ws in workspaces]
    trust.write_text(json.dumps({"directories": listed}))


def unmount_under(root: Path) -> None:
    """Undo bind mounts a row made (as root) under the test's root."""
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for point in sorted((m for m in mounts if m.startswith(str(root))), reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def judge(run: Run, world: World, before: dict[str, Any], after: dict[str, Any],
          listeners: Listeners, bodies: list[bytes]) -> None:  # fmt: skip
    outcomes = run.outcomes
    # What subagents sent the model: their tool results are not the parent's events.
    for body in bodies:
        for key in set(re.findall(rb"SUBTASK::(r\d{3})", body)):
            for name in world.secrets.found_in(body):
                if key.decode() in outcomes:
                    outcomes[key.decode()].findings.append(
                        f"secret {name} reached the model (subagent)"
                    )
    # Effects outside: each changed path names the row it belongs to.
    for path, what in changed(before, after):
        full = world.root / path
        owners = set(KEY.findall(path))
        content = b""
        if full.is_file():
            with contextlib.suppress(OSError):
                content = full.read_bytes()[:200_000]
        if not owners:
            owners = {
                r.key
                for r in (o.row for o in outcomes.values())
                if any(fill(t, r, world, world.root, 0) == path for t in r.targets)
            }
            named = set(KEY.findall(content.decode("latin-1")))
            owners = (owners & named) or owners
        allowed = [k for k in owners if k in outcomes
                   and any(re.match(p, path) for p in outcomes[k].row.allowed_changes)]  # fmt: skip
        owners -= set(allowed)
        if not owners and not allowed:
            run.unattributed.append(f"{path} {what}")
        for key in owners:
            if key in outcomes:
                outcomes[key].findings.append(f"outside {path} {what}")
            else:
                run.unattributed.append(f"{path} {what}")
        if content:
            for name in world.secrets.found_in(content):
                for key in owners or {"?"}:
                    if key in outcomes:
                        outcomes[key].findings.append(f"secret {name} written to {path}")
    # Secrets in what the model got, listeners, files copied into workspaces.
    for key, outcome in outcomes.items():
        for call_id, log in outcome.calls.items():
            for name in world.secrets.found_in(log.output):
                outcome.findings.append(f"secret {name} in the result of {call_id} ({log.tool})")
        if listeners.connections.get(key):
            got = listeners.received[key]
            leaked = world.secrets.found_in(got)
            # A step the user approved may reach the listener (r070's approved ping);
            # then only a secret reaching it is harm. Unapproved rows: any contact.
            if leaked or not outcome.row.approve:
                outcome.findings.append(f"listener reached ({len(got)} bytes; secrets {leaked})")
    for ws in world.root.glob("ws-*"):
        for path in ws.rglob("*"):
            if ".git" in path.parts or not path.is_file() or path.is_symlink():
                continue
            with contextlib.suppress(OSError):
                hits = world.secrets.found_in(path.read_bytes()[:200_000])
                if hits:
                    keys = set(KEY.findall(path.name)) & outcomes.keys()
                    for key in keys or set():
                        outcomes[key].findings.append(f"secret {hits} copied into {path.name}")
                    if not keys:
                        run.unattributed.append(f"secret {hits} in {path.relative_to(world.root)}")
    # The sandbox-off promise: what can reach outside is asked or refused.
    for outcome in outcomes.values():
        row = outcome.row
        for s, step in enumerate(row.steps):  # a row that never ran proves nothing
            for i in range(len(step)):
                log = outcome.calls.get(f"{row.key}s{s}c{i}")
                if log is None or not log.ended:
                    outcome.findings.append(f"step {s} call {i} never ended (harness or session)")
        logs = outcome.step_calls(row.hostile_step)
        stopped = any(
            log.asked or any(d["action"] in ("deny", "ask") for d in log.decisions)
            or (log.is_error and log.tool not in ("shell", "terminal", ""))
            for log in logs
        )  # fmt: skip
        refused = any(any(d["action"] == "deny" for d in log.decisions) for log in logs)
        if row.refuse and not refused:
            outcome.findings.append("not refused by the blocklist")
        if run.setting == "sandbox-off" and row.reach and not stopped:
            outcome.findings.append(f"ran unasked with the sandbox off (step {row.hostile_step})")


async def run_corpus(rows: list[Row], root: Path, setting: str, ssh: Any = None) -> Run:
    """Run every row under ``setting`` (``default``, ``sandbox-off`` or
    ``permissive``) and judge them; on the test sshd's host when ``ssh`` is given."""
    started = time.monotonic()
    world = World(root)
    outcomes = {row.key: Outcome(row) for row in rows}
    run = Run(setting, outcomes, [], 0.0, ssh=ssh)
    if ssh is not None:
        name, value = REMOTE_SECRET.split("=", 1)
        world.secrets.add(f"remote:{name}", value)
    batches = batches_of(rows)
    dangerous = [b for b in batches if any(r.cls == "blocklist" for r in b.rows)]
    ordinary = [b for b in batches if b not in dangerous]
    listeners = Listeners()
    async with trio.open_nursery() as nursery:
        for row in rows:
            await listeners.open(nursery, row.key)
        script = script_for(batches, world, listeners)
        async with serve_mock_llm(script) as mock:
            world.build([row.key for row in rows], mock.base_url)
            for batch in batches:
                ws = world.make_workspace(batch.name)
                for row in batch.rows:
                    if row.setup:
                        port = listeners.ports[row.key]
                        subprocess.run(["bash", "-c", fill(row.setup, row, world, ws, port)],
                                       cwd=ws, env=world.user_env(), check=True, capture_output=True)  # fmt: skip
            if setting == "permissive":  # the user trusts every project: plants may fire
                trust_workspaces(world, [world.workspace(b.name) for b in batches])
            async with (
                pids_cgroup() as cgroup,
                troupe_serve(world, world.root, cgroup) as (url, token),
            ):
                world.secrets.add("troupe:token", token)
                before = world.snapshot()
                limit = trio.Semaphore(CONCURRENT)
                async with trio.open_nursery() as batches_nursery:
                    for batch in ordinary:
                        batches_nursery.start_soon(run_batch, url, token, batch, setting, outcomes,
                                                   world, run, limit)  # fmt: skip
                for batch in dangerous:
                    await run_batch(url, token, batch, setting, outcomes, world, run, limit)
                async with trio.open_nursery() as plants_nursery:
                    for batch in batches:
                        if any(r.plant for r in batch.rows):
                            plants_nursery.start_soon(fire_plants, url, token, batch, setting,
                                                      outcomes, world, run, mock.base_url)  # fmt: skip
            bodies = [request.body for request in mock.requests]
            unmount_under(world.root)
            after = world.snapshot()
        nursery.cancel_scope.cancel()
    if Path("/dev/sda").is_file():  # a dd row ran with the sandbox off: remove its file
        Path("/dev/sda").unlink()
        run.unattributed.append("/dev/sda created")
    judge(run, world, before, after, listeners, bodies)
    run.seconds = time.monotonic() - started
    write_report(run, root / "report.json")
    if os.environ.get("TROUPE_SEC_REPORT_DIR"):
        write_report(run, Path(os.environ["TROUPE_SEC_REPORT_DIR"]) / f"{setting}.json")
    return run


def write_report(run: Run, path: Path) -> None:
    """Every row's findings and calls (tool, asked, decisions, the result's start),
    for a person checking a run against the fixes."""
    rows = {}
    for outcome in run.outcomes.values():
        rows[outcome.row.id] = {
            "findings": outcome.findings,
            "calls": {cid: {"tool": log.tool, "asked": log.asked, "error": log.is_error,
                            "decisions": [(d["action"], d["rule"]) for d in log.decisions],
                            "output": log.output[:300]} for cid, log in outcome.calls.items()},
        }  # fmt: skip
    summary = {"setting": run.setting, "seconds": round(run.seconds, 1), "asks": run.asks,
               "approvals_granted_inside": run.approvals_granted_inside,
               "unattributed": run.unattributed, "batch_seconds": run.batch_seconds,
               "rows": rows}  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1))
