"""Execution environment benchmark: local and SSH exec latency, SSH fan-out, SFTP.

    python bench/environments.py          # a table
    python bench/environments.py --json   # one JSON object

Baselines are measured in the same run: raw ``trio.run_process`` for local exec,
and the OpenSSH client reusing a ControlMaster socket (and ``scp`` through it) for
SSH, against a private sshd on a loopback port started here (root needed, as for
the tests). SSH logins use the unprivileged test user when it exists, so the
figures measure Troupe rather than root's shell startup files.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.kernel import ActorRef, Runtime
from bench.report import Figure, emit, parse_args
from environments.local import LocalEnvironment
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost, ExecCommand, ReadFile, WriteFile
from tests.environments.sshd import SSHServer, start_sshd


async def mean_latency(run: Callable[[], Awaitable[object]], count: int) -> float:
    """Mean seconds per call over ``count`` calls, after two warm-up calls."""
    for _ in range(2):
        await run()
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - start)
    return statistics.fmean(samples)


async def local_figures(count: int, workdir: Path) -> tuple[float, float]:
    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(workdir))
        ours = await mean_latency(lambda: env.ask(ExecCommand("true")), count)

    async def raw() -> None:
        await trio.run_process(["bash", "-c", "true"], capture_stdout=True, capture_stderr=True)

    return ours, await mean_latency(raw, count)


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

    async def run(self, command: str) -> None:
        argv = ["ssh", *self.options, "-p", self.port, self.destination, command]
        await trio.run_process(argv, capture_stdout=True, capture_stderr=True)

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


async def ssh_figures(server: SSHServer, user: str, workdir: Path, quick: bool) -> dict[str, float]:
    count = 20 if quick else 100
    size = (8 if quick else 32) * 1024 * 1024
    line = "x" * 79 + "\n"
    payload = line * (size // len(line))
    megabytes = len(payload) / 1e6
    openssh = OpenSSH(server, user, workdir)
    figures: dict[str, float] = {}
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
        figures["ssh_exec_s"] = await mean_latency(lambda: env.ask(ExecCommand("true")), count)
        figures["openssh_exec_s"] = await mean_latency(lambda: openssh.run("true"), count)
        figures["ssh_fanout_s"] = await fan_out(
            lambda n: env.ask(ExecCommand(f"echo {n}")), count, 8
        )
        figures["openssh_fanout_s"] = await fan_out(lambda n: openssh.run(f"echo {n}"), count, 8)

        start = time.perf_counter()
        await env.ask(WriteFile("ours.txt", payload), timeout=None)
        figures["sftp_write_mb_s"] = megabytes / (time.perf_counter() - start)
        start = time.perf_counter()
        await env.ask(ReadFile("ours.txt", limit=None, line_numbers=False), timeout=None)
        figures["sftp_read_mb_s"] = megabytes / (time.perf_counter() - start)

        local_copy = workdir / "local.txt"
        local_copy.write_text(payload)
        start = time.perf_counter()
        await openssh.copy(str(local_copy), openssh.remote(workdir / "theirs.txt"))
        figures["scp_write_mb_s"] = megabytes / (time.perf_counter() - start)
        start = time.perf_counter()
        await openssh.copy(openssh.remote(workdir / "theirs.txt"), str(workdir / "back.txt"))
        figures["scp_read_mb_s"] = megabytes / (time.perf_counter() - start)
        await openssh.close()
    return figures


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    directory = Path(tempfile.mkdtemp(prefix="troupe-bench-"))
    try:
        local, raw = trio.run(local_figures, 30 if args.quick else 200, directory)
        # Its own directory: sshd reads authorized_keys as the login user, so the
        # path must be traversable by that user (mkdtemp makes 0700 parents).
        sshd_directory = Path(tempfile.mkdtemp(prefix="troupe-bench-sshd-"))
        process, server = start_sshd(sshd_directory)
        user = server.users[-1]
        workdir = Path(tempfile.mkdtemp(prefix="troupe-bench-ssh-"))
        shutil.chown(workdir, user, user)
        try:
            ssh = trio.run(ssh_figures, server, user, workdir, args.quick)
        finally:
            process.kill()
            shutil.rmtree(workdir, ignore_errors=True)
            shutil.rmtree(sshd_directory, ignore_errors=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    local_ratio = local / raw
    ssh_ratio = ssh["ssh_exec_s"] / ssh["openssh_exec_s"]
    write_ratio = ssh["sftp_write_mb_s"] / ssh["scp_write_mb_s"]
    read_ratio = ssh["sftp_read_mb_s"] / ssh["scp_read_mb_s"]
    figures = [
        Figure("local_exec_ms", "local exec `true`", local * 1e3, "ms"),
        Figure("raw_run_process_ms", "raw trio.run_process bash -c true", raw * 1e3, "ms"),
        Figure("local_exec_ratio", "local / raw", local_ratio, "x", "<= 1.3", local_ratio <= 1.3),
        Figure("ssh_exec_ms", f"SSH exec `true` (warm, {user})", ssh["ssh_exec_s"] * 1e3, "ms"),
        Figure("openssh_exec_ms", "OpenSSH ControlMaster exec", ssh["openssh_exec_s"] * 1e3, "ms"),
        Figure("ssh_exec_ratio", "SSH / OpenSSH", ssh_ratio, "x", "<= 1.0", ssh_ratio <= 1.0),
        Figure("ssh_100_at_8_s", "SSH commands, 8 at a time", ssh["ssh_fanout_s"], "s"),
        Figure("openssh_100_at_8_s", "OpenSSH commands, 8 at a time", ssh["openssh_fanout_s"], "s"),
        Figure("sftp_write_mb_s", "SFTP write", ssh["sftp_write_mb_s"], "MB/s"),
        Figure("scp_write_mb_s", "scp write", ssh["scp_write_mb_s"], "MB/s"),
        Figure("sftp_read_mb_s", "SFTP read (read_file)", ssh["sftp_read_mb_s"], "MB/s"),
        Figure("scp_read_mb_s", "scp read", ssh["scp_read_mb_s"], "MB/s"),
        Figure("sftp_write_ratio", "SFTP / scp write", write_ratio, "x"),
        Figure("sftp_read_ratio", "SFTP / scp read", read_ratio, "x"),
    ]
    emit("Troupe execution environments", figures, args.json)


if __name__ == "__main__":
    main()
