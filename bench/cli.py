"""The command's own cost: how long a person (or an editor, or a harness running a
thousand tasks) waits before anything happens, and how much memory it takes.

    python bench/cli.py          # a table
    python bench/cli.py --json   # one JSON object
    python bench/cli.py --quick  # fewer repeats, a smaller big store

Every figure is measured in the same run as its baseline, the two sides
alternating (ABBA, one warm-up each, :func:`bench.report.compare`): the baseline is
``python -c pass``, the interpreter's own start, which contains none of the cost
being measured. Subjects, each a whole process:

- ``troupe --version``, ``troupe --help``;
- ``troupe run -p`` with ``--output-format json``: one answer from ``troupe
  mock-llm`` (a scripted model that answers at once, in its own process), in an
  embedded runtime, and through a running ``troupe serve``;
- ``troupe acp``: from start to the reply to ``initialize`` on its stdout (given
  before the runtime is imported: it needs none, :mod:`actors.acp.handshake`), and
  to the reply to ``session/new`` (the runtime imported, the server started, a
  session created: what an editor that opens a thread at once waits for);
- ``troupe serve --port 0``: from start to its ``listening`` line;
- ``troupe sessions``.

Peak memory is the process's high-water resident set (GNU ``time``'s ``%M`` for a
command that exits; for ``acp`` and ``serve``, ``VmHWM`` at the moment they
answered).

The floor: what CPython with the runtime's libraries cannot go under on this
machine, in the same run: ``python -c 'import trio'`` (the concurrency library the
runtime is written on: its import alone is above the embedded run's 10x target
here), ``python -c 'import trio, httpx, msgspec'``, and a
``trio.run`` that makes one httpx request to the same scripted model (with the
TLS settings the runtime gives a plain-HTTP endpoint: no certificate store
loaded). Beside them, the embedded run's own modules imported and nothing run
(``import actors.commands.run_async, actors.commands.local_host``): what the
run costs before it does anything. For a run
through a server (which imports neither trio nor httpx: the blocking client of
:mod:`protocol.client_blocking`), two floors: that client connecting and asking
for the session list, nothing more (what any client of the protocol pays: the
interpreter, msgspec, the WebSocket upgrade), and that client alone doing one
session's exchange with the same server (the difference is the server's work on
the session: the working tree's snapshot, the system prompt's look at git, the
model's answer, the events). Beneath both, ``python -c 'import msgspec'`` (the
protocol's library) and the client's modules imported and nothing run.

The big store: 10,000 stored sessions holding 1,000,000 events (``--quick``: 1,000
and 100,000), written straight into ``troupe.db`` with SQL in the bench's setup
(a few seconds instead of hours of real runs): each session is a finished one of
100 events copied from the events of a real run (session_start, user_input, then
model turns, processing_end), with its summary, its cost ledger, its reserved seq
mark and its last event, as the server writes them. ``troupe run -p`` and ``troupe
serve`` on it are compared with the same on an empty store; ``troupe sessions`` on
it with ``python -c pass``.

Where Troupe is installed matters to the baseline. In an editable install (``pip
install -e .``, the README's), every interpreter of that venv, ``python -c pass``
included, runs the editable finder's ``.pth`` at start, which imports ``pathlib``,
``re``, ``enum`` and ``urllib.parse``: modules every command imports anyway. So
about half of that baseline (20-22 ms on this machine, against 9-12 ms in a plain
install) is cost the commands pay too, and its ratios come out about half those of
a plain install. ``--plain-install`` builds this tree's wheel, installs
it with its dependencies and no extras into a new venv (uv where it is installed,
else pip), and runs this bench from there: the honest figures for someone who ran
``pip install troupe-agents``. The title says which install was measured.

Troupe's own modules are compiled to bytecode first (``compileall``), as an
installed wheel's are, and the children may write bytecode: without it (with
``PYTHONDONTWRITEBYTECODE`` set, as in some shells) every start compiles the
runtime's sources again and pays for it.

Other processes share this machine (other benchmarks and test runs): medians of
alternating runs and ratios matter, single figures less. Where valgrind is
installed (and not with ``--quick``), the embedded run, its floors, ``--version``,
``--help`` and ``python -c pass`` are also counted in instructions (callgrind, one
run each): a count the machine's load does not move.
"""

from __future__ import annotations

import compileall
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import Figure, Samples, compare, emit, parse_args

PYTHON = sys.executable
_SCRIPT = Path(PYTHON).with_name("troupe")
TROUPE = [str(_SCRIPT)] if _SCRIPT.exists() else [PYTHON, "-m", "actors.cli"]
BARE = [PYTHON, "-c", "pass"]
_NO_HTTPX_CLI = "import sys; sys.modules['httpx._main'] = None\n"
"""httpx imports its own command-line client (click, rich, pygments) wherever they
are installed; Troupe declares it absent (:mod:`actors.commands`), so the floors
do too: with it they were about 2.2x the interpreter's start higher."""
FLOOR_TRIO = [PYTHON, "-c", "import trio"]
FLOOR_MSGSPEC = [PYTHON, "-c", "import msgspec"]
FLOOR_CLIENT = [PYTHON, "-P", "-c", "import protocol.client_blocking"]
"""The blocking client's modules: msgspec, the protocol's messages, the socket."""
FLOOR_IMPORTS = [PYTHON, "-c", _NO_HTTPX_CLI + "import trio, httpx, msgspec"]
FLOOR_REQUEST = (
    _NO_HTTPX_CLI
    + """
import ssl, sys, trio, httpx
async def main():
    # a plain-HTTP URL: no certificate store loaded, as the runtime's model client
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    async with httpx.AsyncClient(verify=tls) as client:
        r = await client.post(sys.argv[1] + "/v1/responses", json={"model": "m", "input": "x"})
        r.read()
trio.run(main)
"""
)
FLOOR_RUNTIME = [PYTHON, "-P", "-c", "import actors.commands.run_async, actors.commands.local_host"]
"""What an embedded run imports before its first model request (the command, the
session's runtime in process), and nothing run: the run minus its work. ``-P``:
the installed package, never a source tree in the working directory."""
_CONNECTED = """
import json, sys
from pathlib import Path
from protocol.client_blocking import connect
from protocol.wire import CreateSession, ListSessions, SubmitInput, SubscribeSession
data = Path(sys.argv[1])
client = connect(json.loads((data / "server.json").read_text())["url"],
                 (data / "token").read_text().strip())
"""
FLOOR_CONNECT = (
    _CONNECTED
    + """
client.request(ListSessions)
client.close()
"""
)
"""What any client of the protocol pays, in Python: the blocking client connects
and asks for the session list (the store's first page)."""
FLOOR_SERVED = (
    _CONNECTED
    + """
session = client.request(CreateSession).session.session_id
client.request(SubscribeSession, session=session)
client.request(SubmitInput, session=session, text="hi")
while client.next_event().kind != "processing_end":
    pass
client.close()
"""
)
"""The least a run through a server can do: the blocking client alone, one
session with one input, no command, no configuration, no output."""
TIMEOUT = 120
VALGRIND = shutil.which("valgrind")
TIME = shutil.which("time") or "/usr/bin/time"
"""GNU time, for each child's peak memory."""


class Measured:
    """Seconds and peak bytes of every run of one subject, in order."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.peaks: list[int] = []


def _env(data: Path) -> dict[str, str]:
    drop = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "TROUPE_CONFIG",
            "TROUPE_TOKEN", "OPENAI_BASE_URL")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    env["TROUPE_DATA_DIR"] = str(data)
    env["XDG_CONFIG_HOME"] = str(data / "config")
    env["NO_COLOR"] = "1"
    return env


def run_to_end(argv: list[str], env: dict[str, str], into: Measured, check: str = "") -> float:
    """Run to its end: wall time, and its peak RSS as GNU time reports it (the
    child's own ``ru_maxrss`` from here would count this process's pages that a
    fork copies before the exec; ``time`` is small, the same on both sides)."""
    with tempfile.NamedTemporaryFile("r") as peak:
        started = time.perf_counter()
        done = subprocess.run(
            [TIME, "-f", "%M", "-o", peak.name, *argv],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        kib = peak.read().strip().splitlines()[-1]
    out, err = done.stdout, done.stderr
    if done.returncode != 0 or (check and check not in out.decode()):
        raise RuntimeError(f"{argv} failed ({done.returncode}): {out[-300:]!r} {err[-300:]!r}")
    into.seconds.append(elapsed)
    into.peaks.append(int(kib) * 1024)
    return elapsed


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """The instructions the process executes, as callgrind counts them (a script's
    interpreter followed): unlike its wall time, not moved by other processes."""
    assert VALGRIND is not None
    done = subprocess.run(
        [VALGRIND, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT * 10,
    )  # fmt: skip
    found = re.search(rb"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{argv} under callgrind failed ({done.returncode})")
    return int(found.group(1))


def _hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def until_line(
    argv: list[str], env: dict[str, str], into: Measured, marker: str, stdin: bytes = b""
) -> float:
    """Start, send ``stdin``, wait for a stdout line containing ``marker``; then stop it."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        if stdin:
            child.stdin.write(stdin)
            child.stdin.flush()
        while True:
            line = child.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv} ended before {marker!r}")
            if marker in line.decode():
                break
        elapsed = time.perf_counter() - started
        into.seconds.append(elapsed)
        into.peaks.append(_hwm(child.pid))
    finally:
        child.send_signal(signal.SIGTERM)
        child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()
    return elapsed


INITIALIZE = (
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}}}) + "\n"
).encode()  # fmt: skip


def _new_session(cwd: Path) -> bytes:
    """ACP's ``session/new``: its reply needs the server (``initialize``'s does not)."""
    params = {"cwd": str(cwd), "mcpServers": []}
    request = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": params}
    return (json.dumps(request) + "\n").encode()


def build_store(data: Path, sessions: int, events_each: int, template: Path) -> None:
    """``sessions`` finished sessions of ``events_each`` events, by direct SQL.

    The rows are those of the one real session in ``template`` (a data directory
    where ``troupe run`` ran once): its session row, summary, cost ledger, events and last event,
    the model turns repeated to make up the count. The schema is the store's own."""
    from actors.store import db

    source = sqlite3.connect(template / "troupe.db")
    row = source.execute("SELECT * FROM sessions LIMIT 1").fetchone()
    sid = row[0]
    events = source.execute(
        "SELECT kind, data FROM events WHERE session_id=? ORDER BY seq", (sid,)
    ).fetchall()
    summary = source.execute("SELECT * FROM summaries WHERE session_id=?", (sid,)).fetchone()
    (ledger,) = source.execute("SELECT spend FROM ledgers WHERE session_id=?", (sid,)).fetchone()
    source.close()
    head, middle, tail = events[:2], events[2:-1], events[-1:]
    body = [middle[i % len(middle)] for i in range(events_each - len(head) - len(tail))]
    kinds = head + body + tail
    connection = db.connect(data / "troupe.db")
    connection.execute("PRAGMA synchronous=OFF")
    connection.execute("BEGIN")
    now = time.time() - 86400 * 30
    for n in range(sessions):
        session = f"s-{n:08x}"
        created = now + n
        connection.execute(
            "INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?)",
            (session, *row[1:6], "idle", 0, created, created + 5),
        )
        connection.execute(
            "INSERT INTO summaries VALUES (?,?,?,?,?,?,?)",
            (session, f"task {n}", *summary[2:6], created + 5),
        )
        connection.execute("INSERT INTO seq_marks VALUES (?,?)", (session, 1024 + events_each))
        connection.execute("INSERT INTO ledgers VALUES (?,?)", (session, ledger))
        connection.executemany(
            "INSERT INTO events VALUES (?,?,?,?,?)",
            [(session, seq, created + seq * 0.01, kind, data)
             for seq, (kind, data) in enumerate(kinds, start=1)],
        )  # fmt: skip
        last = len(kinds)  # the store keeps each session's last event beside its events
        connection.execute(
            "INSERT INTO last_events VALUES (?,?,?)", (session, last, created + last * 0.01)
        )
    connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


def _figures(
    key: str, label: str, subject: Measured, base: Measured, target: float | None, base_label: str
) -> list[Figure]:
    ratio = Samples([a / b for a, b in zip(subject.seconds, base.seconds, strict=True)]).median
    # the ratio of the medians (robust to one slow pair), with the per-pair median beside it
    of_medians = Samples(subject.seconds).median / Samples(base.seconds).median
    met = None if target is None else of_medians <= target
    return [
        Figure(f"{key}_median_s", f"{label}: median", Samples(subject.seconds).median, "s"),
        Figure(
            f"{key}_ratio",
            f"{label} / {base_label} (medians)",
            of_medians,
            "x",
            f"<= {target}" if target is not None else "",
            met,
        ),
        Figure(f"{key}_pair_ratio", f"{label} / {base_label} (median of pairs)", ratio, "x"),
        Figure(f"{key}_peak_mb", f"{label}: peak memory", max(subject.peaks) / 1e6, "MB"),
    ]


def _pair(
    subject: Callable[[Measured], float], base: Callable[[Measured], float], repeats: int
) -> tuple[Measured, Measured]:
    a, b = Measured(), Measured()
    compare({"subject": lambda: subject(a), "base": lambda: base(b)}, repeats)
    # compare's warm-up runs are recorded too: drop them
    for measured in (a, b):
        del measured.seconds[0], measured.peaks[0]
    return a, b


PLAIN_INSTALL = "--plain-install"
INSTALL_KIND = "TROUPE_BENCH_INSTALL"
"""Set by :func:`in_a_plain_install` for the bench it starts: what the title says."""


def in_a_plain_install(repo: Path, argv: list[str]) -> int:
    """This bench again, from a new venv holding this tree's wheel and its
    dependencies, no extras and nothing editable (module doc)."""
    where = Path(tempfile.mkdtemp(prefix="troupe-bench-install-"))
    try:
        print("building the wheel and a venv for it ...", file=sys.stderr)
        quiet = {"check": True, "stdout": subprocess.DEVNULL}
        subprocess.run([PYTHON, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                        where / "wheels", repo], **quiet)  # fmt: skip
        (wheel,) = (where / "wheels").glob("troupe_agents-*.whl")
        venv = where / "venv"
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", venv], **quiet)
        python = venv / "bin" / "python"
        uv = shutil.which("uv") or shutil.which("uv", path=str(Path(PYTHON).parent))
        if uv is not None:
            install = [uv, "pip", "install", "-q", "--compile-bytecode", "--python", python]
        else:
            install = [PYTHON, "-m", "pip", "--python", python, "install", "-q"]
        subprocess.run([*install, wheel], **quiet)
        env = {**os.environ, INSTALL_KIND: "a plain install (the wheel, no extras)"}
        return subprocess.run([python, __file__, *argv], env=env).returncode
    finally:
        shutil.rmtree(where, ignore_errors=True)


def main() -> None:
    repo = Path(__file__).resolve().parents[1]
    if PLAIN_INSTALL in sys.argv[1:]:
        sys.exit(in_a_plain_install(repo, [a for a in sys.argv[1:] if a != PLAIN_INSTALL]))
    args = parse_args(__doc__ or "")
    repeats = 3 if args.quick else 7
    big_sessions, big_events = (1_000, 100) if args.quick else (10_000, 100)
    figures: list[Figure] = []
    root = Path(tempfile.mkdtemp(prefix="troupe-bench-cli-"))
    compileall.compile_dir(repo / "actors", quiet=1)
    compileall.compile_dir(repo / "protocol", quiet=1)
    compileall.compile_dir(repo / "environments", quiet=1)
    mock = serve = None
    try:
        script = root / "script.json"
        script.write_text('{"turns": [{"text": "done"}], "repeat": true}')
        mock = subprocess.Popen(
            [*TROUPE, "mock-llm", "--script", str(script)], stdout=subprocess.PIPE
        )
        assert mock.stdout is not None
        url = mock.stdout.readline().decode().strip()
        dirs = {name: root / name for name in ("empty", "served", "serve", "big", "acp")}
        for path in dirs.values():
            path.mkdir()
        env = {name: _env(path) for name, path in dirs.items()}

        def bare(m: Measured) -> float:
            return run_to_end(BARE, env["empty"], m)

        def troupe(*argv: str, where: str = "empty", check: str = "") -> Callable[..., float]:
            return lambda m: run_to_end([*TROUPE, *argv], env[where], m, check)

        run_embedded = ("run", "--embedded", "--base-url", url, "--output-format", "json",
                        "-p", "hi")  # fmt: skip
        embedded_check = '"runtime": "embedded"'

        cases: list[tuple[str, str, Callable[[Measured], float], float | None]] = [
            ("floor_trio", "floor: import trio",
             lambda m: run_to_end(FLOOR_TRIO, env["empty"], m), None),
            ("floor_msgspec", "floor: import msgspec",
             lambda m: run_to_end(FLOOR_MSGSPEC, env["empty"], m), None),
            ("floor_client", "floor: the blocking client, imported",
             lambda m: run_to_end(FLOOR_CLIENT, env["empty"], m), None),
            ("floor_imports", "floor: import trio, httpx, msgspec",
             lambda m: run_to_end(FLOOR_IMPORTS, env["empty"], m), None),
            ("floor_request", "floor: trio.run + one httpx request",
             lambda m: run_to_end([PYTHON, "-c", FLOOR_REQUEST, url], env["empty"], m), None),
            ("floor_runtime", "the embedded run's modules, imported",
             lambda m: run_to_end(FLOOR_RUNTIME, env["empty"], m), None),
            ("version", "troupe --version", troupe("--version"), 3.0),
            ("help", "troupe --help", troupe("--help"), 3.0),
            ("run", "troupe run -p (embedded)",
             troupe(*run_embedded, check=embedded_check), 10.0),
            ("acp", "troupe acp (to initialize reply)",
             lambda m: until_line([*TROUPE, "acp", "--base-url", url], env["acp"], m,
                                  '"id":1', INITIALIZE), 10.0),
            ("acp_session", "troupe acp (to the session/new reply)",
             lambda m: until_line([*TROUPE, "acp", "--base-url", url], env["acp"], m,
                                  '"id":2', INITIALIZE + _new_session(dirs["acp"])), None),
            ("serve", "troupe serve (to ready)",
             lambda m: until_line([*TROUPE, "serve", "--port", "0", "--base-url", url],
                                  env["serve"], m, "listening"), 15.0),
            ("sessions", "troupe sessions", troupe("sessions"), None),
        ]  # fmt: skip
        # One real run gives the rows the big store is made of.
        run_to_end([*TROUPE, *run_embedded], env["big"], Measured(), embedded_check)
        template = root / "template"
        shutil.copytree(dirs["big"], template)
        for key, label, subject, target in cases:
            a, b = _pair(subject, bare, repeats)
            figures += _figures(key, label, a, b, target, "python -c pass")
            if key == "version":
                figures.append(
                    Figure("bare_median_s", "python -c pass: median",
                           Samples(b.seconds).median, "s"))  # fmt: skip
                figures.append(
                    Figure("bare_peak_mb", "python -c pass: peak memory", max(b.peaks) / 1e6, "MB")
                )

        if VALGRIND is not None and not args.quick:
            counted = {
                "bare": BARE,
                "floor_request": [PYTHON, "-c", FLOOR_REQUEST, url],
                "floor_runtime": FLOOR_RUNTIME,
                "run": [*TROUPE, *run_embedded],
                "version": [*TROUPE, "--version"],
                "help": [*TROUPE, "--help"],
            }
            count = {key: instructions(argv, env["empty"]) for key, argv in counted.items()}
            for key, label in (("bare", "python -c pass"),
                               ("floor_request", "floor: trio.run + one httpx request"),
                               ("floor_runtime", "the embedded run's modules, imported"),
                               ("run", "troupe run -p (embedded)"),
                               ("version", "troupe --version"),
                               ("help", "troupe --help")):  # fmt: skip
                figures.append(
                    Figure(f"{key}_instructions_m", f"{label}: instructions",
                           count[key] / 1e6, "M"))  # fmt: skip
                if key != "bare":
                    figures.append(
                        Figure(f"{key}_instructions_ratio", f"{label} / python -c pass: "
                               "instructions", count[key] / count["bare"], "x"))  # fmt: skip

        # Through a running server: the command finds it in its data directory.
        serve = subprocess.Popen(
            [*TROUPE, "serve", "--port", "0", "--base-url", url],
            env=env["served"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert serve.stdout is not None
        while "listening" not in serve.stdout.readline().decode():
            pass
        served = troupe("run", "--output-format", "json", "-p", "hi", where="served",
                        check='"runtime": "ws://')  # fmt: skip
        a, b = _pair(served, bare, repeats)
        figures += _figures("run_served", "troupe run -p (through a server)", a, b, 6.0,
                            "python -c pass")  # fmt: skip
        connect = [PYTHON, "-c", FLOOR_CONNECT, str(dirs["served"])]
        a, b = _pair(lambda m: run_to_end(connect, env["served"], m), bare, repeats)
        figures += _figures("floor_connect", "floor: the blocking client, connected, "
                            "one request", a, b, None, "python -c pass")  # fmt: skip
        floor = [PYTHON, "-c", FLOOR_SERVED, str(dirs["served"])]
        a, b = _pair(lambda m: run_to_end(floor, env["served"], m), bare, repeats)
        figures += _figures("floor_served", "floor: the blocking client, one session", a, b,
                            None, "python -c pass")  # fmt: skip
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        serve = None

        started = time.perf_counter()
        build_store(dirs["big"], big_sessions, big_events, template)
        built = time.perf_counter() - started
        label = f"{big_sessions:,} sessions / {big_sessions * big_events:,} events"
        figures.append(Figure("big_store_build_s", f"building the store of {label}", built, "s"))
        shutil.copytree(dirs["serve"], root / "serve-empty")
        env["serve-empty"] = _env(root / "serve-empty")
        for key, title, argv, marker, target in (
            ("big_run", "troupe run -p (embedded)", run_embedded, "", 1.2),
            ("big_serve", "troupe serve (to ready)", ("serve", "--port", "0", "--base-url", url),
             "listening", 1.2),
        ):  # fmt: skip

            def on(where: str, argv: tuple[str, ...] = argv, marker: str = marker):
                if marker:
                    return lambda m: until_line([*TROUPE, *argv], env[where], m, marker)
                return lambda m: run_to_end([*TROUPE, *argv], env[where], m, embedded_check)

            a, b = _pair(on("big"), on("empty" if not marker else "serve-empty"), repeats)
            figures += _figures(key, f"{title}, {label}", a, b, target, "the same, empty store")
        a, b = _pair(troupe("sessions", where="big"), bare, repeats)
        figures += _figures("big_sessions", f"troupe sessions, {label}", a, b, 10.0,
                            "python -c pass")  # fmt: skip
    finally:
        for process in (serve, mock):
            if process is not None:
                process.terminate()
                process.wait()
        shutil.rmtree(root, ignore_errors=True)
    install = os.environ.get(INSTALL_KIND) or (
        "an editable install" if _editable() else "this interpreter's install"
    )
    emit(f"troupe command latency and memory, {install} (a shared machine: ratios matter)",
         figures, args.json)  # fmt: skip


def _editable() -> bool:
    """Whether ``actors`` comes from a source tree through an editable finder."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    return any(site.glob("__editable__*troupe*"))


if __name__ == "__main__":
    main()
