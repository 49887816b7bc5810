"""Execution environment benchmark: local, SSH and Docker exec latency, SSH fan-out, SFTP.

    python bench/environments.py          # a table
    python bench/environments.py --json   # one JSON object

Baselines are measured in the same run: raw ``trio.run_process`` for local exec,
and the OpenSSH client reusing a ControlMaster socket (and ``scp`` through it) for
SSH, against a private sshd with stock limits (MaxSessions 10, MaxStartups
10:30:100) on a loopback port started here (root needed, as for the tests). Both
sides are warmed alike, then measured in rounds whose order alternates; each
latency is reported as the min and the median of the per-round means, and each
ratio as median against median. SSH logins use the unprivileged test user when it
exists, so the figures measure Troupe rather than root's shell startup files.

Docker (where a private dockerd starts, as for the tests: root and ``docker.io``):
exec ``true`` in a container through Troupe against ``docker exec`` through the CLI
in the same container, and 1 MB written and read through Troupe against ``docker cp``.
Container isolation (docs/isolation.md): 20 subagent containers started at once
through Troupe's isolation (create, start, the workspace copied in) against 20
``docker run -d`` through the CLI at once, each start's seconds (median, max).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import msgspec
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import ActorRef, Runtime
from bench.report import Figure, emit, parse_args
from environments.docker.environment import DockerEnvironment
from environments.local import LocalEnvironment
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost, ExecCommand, ReadFile, WriteFile
from tests.environments.dockerd import (
    DockerUnavailable,
    build_test_image,
    start_dockerd,
    stop_dockerd,
)
from tests.environments.sshd import SSHServer, start_sshd

FAN_OUT_TOTAL = 100
FAN_OUT_WIDTH = 20


class Paired(msgspec.Struct, frozen=True):
    """Seconds per call of two sides measured in the same run, one mean per round."""

    ours: list[float]
    theirs: list[float]

    @property
    def ratio(self) -> float:
        """Median against median: ours / theirs."""
        return statistics.median(self.ours) / statistics.median(self.theirs)


async def paired(
    ours: Callable[[], Awaitable[object]],
    theirs: Callable[[], Awaitable[object]],
    rounds: int,
    per_round: int,
) -> Paired:
    """Both sides warmed alike, then ``rounds`` rounds of ``per_round`` calls each,
    the order alternating every round so neither side always runs on a warmer (or
    busier) machine."""
    for _ in range(3):
        await ours()
        await theirs()
    samples: dict[str, list[float]] = {"ours": [], "theirs": []}
    sides = [("ours", ours), ("theirs", theirs)]
    for round_number in range(rounds):
        for name, run in sides if round_number % 2 == 0 else sides[::-1]:
            start = time.perf_counter()
            for _ in range(per_round):
                await run()
            samples[name].append((time.perf_counter() - start) / per_round)
    return Paired(samples["ours"], samples["theirs"])


async def local_figures(rounds: int, per_round: int, workdir: Path) -> Paired:
    async def raw() -> None:
        await trio.run_process(["bash", "-c", "true"], capture_stdout=True, capture_stderr=True)

    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(workdir))
        return await paired(lambda: env.ask(ExecCommand("true")), raw, rounds, per_round)


class OpenSSH:
    """The OpenSSH client, multiplexed over one ControlMaster socket."""

    def __init__(self, server: SSHServer, user: str, directory: Path) -> None:
        self.options = [
            "-i", str(server.client_key),
            "-o", f"UserKnownHostsFile={server.known_hosts}",
            "-o", "StrictHostKeyChecking=yes",
            "-o", "ControlMaster=auto",
            "-o", f"ControlPath={directory / 'control.sock'}",
            "-o", "ControlPersist=300",
        ]  # fmt: skip
        self.port = str(server.port)
        self.destination = f"{user}@127.0.0.1"

    async def run(self, command: str) -> bool:
        """True when the command ran (the mux is refused sessions past MaxSessions)."""
        argv = ["ssh", *self.options, "-p", self.port, self.destination, command]
        done = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False)
        return done.returncode == 0

    async def copy(self, source: str, target: str) -> None:
        argv = ["scp", "-q", *self.options, "-P", self.port, source, target]
        await trio.run_process(argv, capture_stdout=True, capture_stderr=True)

    def remote(self, path: Path) -> str:
        return f"{self.destination}:{path}"

    async def close(self) -> None:
        argv = ["ssh", *self.options, "-p", self.port, "-O", "exit", self.destination]
        await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False)


async def fan_out(run: Callable[[int], Awaitable[object]], total: int, width: int) -> float:
    """Seconds to run ``total`` commands, ``width`` at a time."""
    limiter = trio.CapacityLimiter(width)

    async def one(n: int) -> None:
        async with limiter:
            await run(n)

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for n in range(total):
            nursery.start_soon(one, n)
    return time.perf_counter() - start


class FanOut(msgspec.Struct, frozen=True):
    ours_s: list[float]
    theirs_s: list[float]
    ours_ok: int
    theirs_ok: int
    """Commands that ran, over every repetition."""


async def fan_out_pair(env: ActorRef, openssh: OpenSSH, repeats: int) -> FanOut:
    """100 commands, 20 at a time, the two sides alternating which goes first."""
    counts = {"ours": 0, "theirs": 0}

    async def ours(n: int) -> None:
        result = await env.ask(ExecCommand(f"echo {n}", timeout_ms=120_000), timeout=None)
        ran = result.stdout == f"{n}\n"
        counts["ours"] += ran

    async def theirs(n: int) -> None:
        ran = await openssh.run(f"echo {n}")
        counts["theirs"] += ran

    await fan_out(ours, FAN_OUT_WIDTH, FAN_OUT_WIDTH)  # warm both alike
    await fan_out(theirs, FAN_OUT_WIDTH, FAN_OUT_WIDTH)
    counts.update(ours=0, theirs=0)
    times: dict[str, list[float]] = {"ours": [], "theirs": []}
    sides: list[tuple[str, Callable[[int], Awaitable[None]]]] = [("ours", ours), ("theirs", theirs)]
    for repeat in range(repeats):
        for name, run in sides if repeat % 2 == 0 else sides[::-1]:
            times[name].append(await fan_out(run, FAN_OUT_TOTAL, FAN_OUT_WIDTH))
    return FanOut(times["ours"], times["theirs"], counts["ours"], counts["theirs"])


async def ssh_figures(
    server: SSHServer, user: str, workdir: Path, quick: bool
) -> tuple[Paired, FanOut, dict[str, float]]:
    rounds, per_round = (3, 10) if quick else (7, 20)
    size = (8 if quick else 32) * 1024 * 1024
    line = "x" * 79 + "\n"
    payload = line * (size // len(line))
    megabytes = len(payload) / 1e6
    openssh = OpenSSH(server, user, workdir)
    transfer: dict[str, list[float]] = {key: [] for key in ("sftp_w", "sftp_r", "scp_w", "scp_r")}
    async with Runtime() as runtime:
        bridge = await runtime.spawn(SSHBridge())
        env: ActorRef = await bridge.ask(
            AddSSHHost(
                target=f"ssh://{user}@127.0.0.1:{server.port}",
                name="bench",
                working_dir=str(workdir),
                known_hosts=str(server.known_hosts),
                client_keys=[str(server.client_key)],
            )
        )
        exec_pair = await paired(
            lambda: env.ask(ExecCommand("true")), lambda: openssh.run("true"), rounds, per_round
        )
        fan = await fan_out_pair(env, openssh, 1 if quick else 3)
        local_copy = workdir / "local.txt"
        local_copy.write_text(payload)

        async def timed(key: str, work: Awaitable[object]) -> None:
            start = time.perf_counter()
            await work
            transfer[key].append(megabytes / (time.perf_counter() - start))

        for repeat in range(1 if quick else 3):
            for side in ("ours", "theirs") if repeat % 2 == 0 else ("theirs", "ours"):
                if side == "ours":
                    await timed("sftp_w", env.ask(WriteFile("ours.txt", payload), timeout=None))
                    request = ReadFile("ours.txt", limit=None, line_numbers=False)
                    await timed("sftp_r", env.ask(request, timeout=None))
                else:
                    target = openssh.remote(workdir / "theirs.txt")
                    await timed("scp_w", openssh.copy(str(local_copy), target))
                    await timed("scp_r", openssh.copy(target, str(workdir / "back.txt")))
        await openssh.close()
    return exec_pair, fan, {key: statistics.median(values) for key, values in transfer.items()}


class DockerFigures(msgspec.Struct, frozen=True):
    exec_pair: Paired
    transfer: dict[str, float]


async def docker_figures(
    host: str, image: str, workdir: Path, rounds: int, per_round: int
) -> DockerFigures:
    cli = shutil.which("docker")
    if cli is None:
        raise DockerUnavailable("no docker CLI to compare with")
    async with Runtime() as runtime:
        environment = DockerEnvironment(image, workspace=str(workdir), docker_host=host)
        env = await runtime.spawn(environment)
        await env.ask(ExecCommand("true"))
        container = environment.container
        assert container is not None

        async def theirs() -> None:
            argv = [cli, "-H", host, "exec", container, "true"]
            await trio.run_process(argv, capture_stdout=True, capture_stderr=True)

        exec_pair = await paired(lambda: env.ask(ExecCommand("true")), theirs, rounds, per_round)
        payload = "x" * 1_000_000
        (workdir / "source.txt").write_text(payload)
        transfer: dict[str, list[float]] = {k: [] for k in ("ours_w", "ours_r", "cp_w", "cp_r")}

        async def timed(key: str, work: Awaitable[object]) -> None:
            start = time.perf_counter()
            await work
            transfer[key].append(1.0 / (time.perf_counter() - start))

        async def cp(source: str, target: str) -> None:
            argv = [cli, "-H", host, "cp", source, target]
            await trio.run_process(argv, capture_stdout=True, capture_stderr=True)

        for _ in range(3 if rounds < 5 else 7):
            await timed("ours_w", env.ask(WriteFile("ours.txt", payload)))
            await timed("ours_r", env.ask(ReadFile("ours.txt", exact=True)))
            await timed("cp_w", cp(str(workdir / "source.txt"), f"{container}:/tmp/theirs.txt"))
            await timed("cp_r", cp(f"{container}:/tmp/theirs.txt", str(workdir / "back.txt")))
    return DockerFigures(exec_pair, {k: statistics.median(v) for k, v in transfer.items()})


def _docker_figures(args: object, rounds: int, per_round: int) -> list[Figure]:
    directory = Path(tempfile.mkdtemp(prefix="troupe-bench-dockerd-"))
    workdir = Path(tempfile.mkdtemp(prefix="troupe-bench-docker-"))
    try:
        daemon = start_dockerd(directory)
    except DockerUnavailable as reason:
        print(f"Docker figures skipped: {reason}", file=sys.stderr)
        return []
    try:
        image = build_test_image(daemon)
        found = trio.run(docker_figures, daemon.host, image, workdir, rounds, per_round)
        starts = trio.run(isolation_starts, daemon.host, image, workdir)
    except DockerUnavailable as reason:
        print(f"Docker figures skipped: {reason}", file=sys.stderr)
        return []
    finally:
        stop_dockerd(daemon)
        shutil.rmtree(workdir, ignore_errors=True)
    pair, transfer = found.exec_pair, found.transfer
    return [
        *_latency("docker_exec", "Docker exec `true` through Troupe (warm)", pair.ours),
        *_latency("docker_cli_exec", "docker exec CLI, same container", pair.theirs),
        Figure("docker_exec_ratio", "Troupe / docker exec CLI (medians)", pair.ratio, "x"),
        Figure("docker_write_mb_s", "Docker write 1 MB through Troupe (median)",
               transfer["ours_w"], "MB/s"),
        Figure("docker_cp_write_mb_s", "docker cp into the container (median)",
               transfer["cp_w"], "MB/s"),
        Figure("docker_read_mb_s", "Docker read 1 MB through Troupe (median)",
               transfer["ours_r"], "MB/s"),
        Figure("docker_cp_read_mb_s", "docker cp out of the container (median)",
               transfer["cp_r"], "MB/s"),
        *isolation_figures(*starts),
    ]  # fmt: skip


ISOLATED_CONTAINERS = 20


async def isolation_starts(host: str, image: str, workdir: Path) -> tuple[list[float], list[float]]:
    """Seconds of each of 20 parallel container starts: through Troupe's isolation
    (as ``spawn_agent(isolation="container")`` does), then ``docker run -d`` via the CLI."""
    from actors.session.isolation import Isolator

    cli = shutil.which("docker")
    if cli is None:
        raise DockerUnavailable("no docker CLI to compare with")
    (workdir / "project.sh").write_text("echo built\n")
    ours: list[float] = []
    theirs: list[float] = []
    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(workdir))
        isolator = Isolator(env, lambda actor, name: runtime.spawn(actor, name=name), runtime.stop)

        async def start_ours(n: int) -> None:
            start = time.perf_counter()
            await isolator.open("container", f"bench.a-{n}", f"a-{n}", copies=[], image=image,
                                merge=False)  # fmt: skip
            ours.append(time.perf_counter() - start)

        with _docker_host(host):
            async with trio.open_nursery() as nursery:
                for n in range(ISOLATED_CONTAINERS):
                    nursery.start_soon(start_ours, n)

    async def start_theirs(n: int) -> None:
        argv = [cli, "-H", host, "run", "-d", "--network", "none", "--label", "troupe.bench=1",
                "--name", f"bench-{n}", image, "sleep", "infinity"]  # fmt: skip
        start = time.perf_counter()
        await trio.run_process(argv, capture_stdout=True, capture_stderr=True)
        theirs.append(time.perf_counter() - start)

    async with trio.open_nursery() as nursery:
        for n in range(ISOLATED_CONTAINERS):
            nursery.start_soon(start_theirs, n)
    names = [f"bench-{n}" for n in range(ISOLATED_CONTAINERS)]
    await trio.run_process([cli, "-H", host, "rm", "-f", *names], capture_stdout=True,
                           capture_stderr=True)  # fmt: skip
    return ours, theirs


@contextlib.contextmanager
def _docker_host(host: str) -> Iterator[None]:
    """``DOCKER_HOST`` set for a block (isolation reads it, as the docker CLI does)."""
    before = os.environ.get("DOCKER_HOST")
    os.environ["DOCKER_HOST"] = host
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = before


def isolation_figures(ours: list[float], theirs: list[float]) -> list[Figure]:
    count = ISOLATED_CONTAINERS
    return [
        Figure("isolated_container_start_median_s",
               f"container isolation: start per subagent, {count} at once (median)",
               statistics.median(ours), "s"),
        Figure("isolated_container_start_max_s", "container isolation: start per subagent (max)",
               max(ours), "s"),
        Figure("docker_run_start_median_s", f"docker run -d via the CLI, {count} at once (median)",
               statistics.median(theirs), "s"),
        Figure("docker_run_start_max_s", "docker run -d via the CLI (max)", max(theirs), "s"),
    ]  # fmt: skip


def _latency(key: str, label: str, samples: list[float]) -> list[Figure]:
    return [
        Figure(f"{key}_min_ms", f"{label}, min of rounds", min(samples) * 1e3, "ms"),
        Figure(f"{key}_median_ms", f"{label}, median", statistics.median(samples) * 1e3, "ms"),
    ]


def main() -> None:
    args = parse_args((__doc__ or "").splitlines()[0])
    directory = Path(tempfile.mkdtemp(prefix="troupe-bench-"))
    try:
        rounds, per_round = (3, 10) if args.quick else (7, 30)
        local = trio.run(local_figures, rounds, per_round, directory)
        docker = _docker_figures(args, rounds, per_round)
        # Its own directory: sshd reads authorized_keys as the login user, so the
        # path must be traversable by that user (mkdtemp makes 0700 parents).
        sshd_directory = Path(tempfile.mkdtemp(prefix="troupe-bench-sshd-"))
        process, server = start_sshd(sshd_directory, max_sessions=10, max_startups="10:30:100")
        user = server.users[-1]
        workdir = Path(tempfile.mkdtemp(prefix="troupe-bench-ssh-"))
        shutil.chown(workdir, user, user)
        try:
            exec_pair, fan, transfer = trio.run(ssh_figures, server, user, workdir, args.quick)
        finally:
            process.kill()
            shutil.rmtree(workdir, ignore_errors=True)
            shutil.rmtree(sshd_directory, ignore_errors=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    runs = FAN_OUT_TOTAL * len(fan.ours_s)
    figures = [
        *_latency("local_exec", "local exec `true`", local.ours),
        *_latency("raw_run_process", "raw trio.run_process bash -c true", local.theirs),
        Figure("local_exec_ratio", "local / raw (medians)", local.ratio, "x", "<= 1.3",
               local.ratio <= 1.3),
        *_latency("ssh_exec", f"SSH exec `true` (warm, {user})", exec_pair.ours),
        *_latency("openssh_exec", "OpenSSH ControlMaster exec", exec_pair.theirs),
        Figure("ssh_exec_ratio", "SSH / OpenSSH (medians)", exec_pair.ratio, "x", "<= 1.0",
               exec_pair.ratio <= 1.0),
        Figure("ssh_100_at_20_s", "SSH: 100 commands, 20 at a time, MaxSessions 10 (median)",
               statistics.median(fan.ours_s), "s"),
        Figure("ssh_100_at_20_ok", "SSH: commands that ran", fan.ours_ok, f"of {runs}",
               str(runs), fan.ours_ok == runs),
        Figure("openssh_100_at_20_s", "OpenSSH ControlMaster, same load (median)",
               statistics.median(fan.theirs_s), "s"),
        Figure("openssh_100_at_20_ok", "OpenSSH: commands that ran (mux falls back to logins)",
               fan.theirs_ok, f"of {runs}"),
        Figure("sftp_write_mb_s", "SFTP write (median)", transfer["sftp_w"], "MB/s"),
        Figure("scp_write_mb_s", "scp write (median)", transfer["scp_w"], "MB/s"),
        Figure("sftp_read_mb_s", "SFTP read, read_file (median)", transfer["sftp_r"], "MB/s"),
        Figure("scp_read_mb_s", "scp read (median)", transfer["scp_r"], "MB/s"),
        Figure("sftp_write_ratio", "SFTP / scp write", transfer["sftp_w"] / transfer["scp_w"], "x"),
        Figure("sftp_read_ratio", "SFTP / scp read", transfer["sftp_r"] / transfer["scp_r"], "x"),
        *docker,
    ]  # fmt: skip
    medians = {figure.key: figure.value for figure in figures}
    if "docker_exec_median_ms" in medians:
        ratio = medians["docker_exec_median_ms"] / medians["local_exec_median_ms"]
        figures.append(Figure("docker_local_ratio", "Docker exec / local exec (medians)",
                              ratio, "x"))  # fmt: skip
    emit("Troupe execution environments", figures, args.json)


if __name__ == "__main__":
    main()
