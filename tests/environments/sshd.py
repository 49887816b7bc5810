"""A real OpenSSH sshd for the tests, on a free loopback port, with its own config.

Never the machine's own sshd: this one has its own host key, authorized keys,
MaxSessions 10 (or what a test asks for), and a SetEnv secret that environment
filtering must hide. It lets the tests log in as root and as an unprivileged user
(created here when missing, which needs root), and logs to a file a test can read
(one "Accepted publickey" line per connection).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

TEST_USER = "troupe-test"
REMOTE_SECRET = "FOO_API_KEY=sk-remote-secret"
NOT_A_TOP_SHELL = "SHLVL=1"
"""Set in every session: the login's bash then counts itself a nested shell and skips
what Debian's bash does for a top-level shell run by sshd, sourcing the account's
``~/.bashrc``. On this machine root's runs ``pyenv init`` (half a
second a command, and ``python3`` through a pyenv shim): the account's own setup,
which no test is about, in front of every remote command."""
SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd")
USER_LOCK = "/tmp/troupe-test-user.lock"
PORT_ATTEMPTS = 5
"""A free port can be taken between choosing it and sshd binding it (parallel workers
start servers too): sshd then exits at start, and another port is tried."""


@dataclass(frozen=True)
class SSHServer:
    """What a test needs to reach the server."""

    port: int
    pid: int
    host_key_line: str
    client_key: Path
    known_hosts: Path
    users: tuple[str, ...]
    config: Path
    log: Path

    def log_lines(self, needle: str) -> list[str]:
        """Lines of sshd's log that contain ``needle``."""
        try:
            text = self.log.read_text(errors="replace")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if needle in line]


class SSHDUnavailable(Exception):
    """Why this machine cannot run the test sshd (the tests skip with this text)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _user_exists() -> bool:
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        return False
    return True


def ensure_test_user() -> str | None:
    """The unprivileged login, created when missing and we may; None if impossible.
    Parallel test workers each start an sshd: a lock file makes one of them create
    the account and the others find it."""
    if _user_exists():
        return TEST_USER
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        return None
    with open(USER_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _user_exists():
            return TEST_USER
        # Password "*": no password can match, yet the account is not locked ("!"),
        # which sshd without PAM would refuse even for key logins.
        subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/bash", "--password", "*", TEST_USER],
            check=True,
        )
    return TEST_USER


def start_sshd(
    directory: Path,
    *,
    max_sessions: int = 10,
    max_startups: str = "100:30:200",
    log_level: str = "INFO",
) -> tuple[subprocess.Popen[bytes], SSHServer]:
    """Start sshd with its own keys and config in ``directory``. ``max_startups``
    defaults to a lenient value for the shared fixture; a test of stock behaviour
    passes OpenSSH's default, ``10:30:100``."""
    sshd = next((c for c in SSHD_CANDIDATES if os.access(c, os.X_OK)), None)
    if sshd is None:
        raise SSHDUnavailable("sshd is not installed (apt-get install openssh-server)")
    if os.geteuid() != 0:
        raise SSHDUnavailable("the test sshd must run as root to accept several logins")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
    host_key, client_key = directory / "host_ed25519", directory / "client_ed25519"
    for key in (host_key, client_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    authorized = directory / "authorized_keys"
    shutil.copy(client_key.with_suffix(".pub"), authorized)
    authorized.chmod(0o644)
    directory.chmod(0o755)
    users = tuple(u for u in ("root", ensure_test_user()) if u)
    config = directory / "sshd_config"
    log = directory / "sshd.log"
    settings = {
        "HostKey": host_key, "PidFile": directory / "sshd.pid", "AuthorizedKeysFile": authorized,
        "MaxSessions": max_sessions, "MaxStartups": max_startups, "LogLevel": log_level,
    }  # fmt: skip
    process, port = _start_on_a_free_port(sshd, config, log, settings)
    key_type, key_data = host_key.with_suffix(".pub").read_text().split()[:2]
    known_hosts = directory / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {key_type} {key_data}\n")
    return process, SSHServer(
        port=port,
        pid=process.pid,
        host_key_line=f"{key_type} {key_data}",
        client_key=client_key,
        known_hosts=known_hosts,
        users=users,
        config=config,
        log=log,
    )


def _start_on_a_free_port(
    sshd: str, config: Path, log: Path, settings: dict[str, object]
) -> tuple[subprocess.Popen[bytes], int]:
    """sshd listening with ``settings`` on a free loopback port, and that port."""
    for _ in range(PORT_ATTEMPTS):
        port = _free_port()
        config.write_text(
            f"""Port {port}
ListenAddress 127.0.0.1
HostKey {settings["HostKey"]}
PidFile {settings["PidFile"]}
AuthorizedKeysFile {settings["AuthorizedKeysFile"]}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
MaxSessions {settings["MaxSessions"]}
MaxStartups {settings["MaxStartups"]}
SetEnv {REMOTE_SECRET} {NOT_A_TOP_SHELL}
Subsystem sftp internal-sftp
LogLevel {settings["LogLevel"]}
"""
        )
        try:
            return _listening_sshd(sshd, config, log, port), port
        except _PortTaken:
            continue
    raise SSHDUnavailable(f"no free port after {PORT_ATTEMPTS} tries")


class _PortTaken(Exception):
    """sshd could not bind the port chosen for it (someone took it meanwhile)."""


def _listening_sshd(sshd: str, config: Path, log: Path, port: int) -> subprocess.Popen[bytes]:
    """Start sshd with ``config`` and wait until it accepts on ``port``."""
    log.unlink(missing_ok=True)
    process = subprocess.Popen(
        [sshd, "-D", "-E", str(log), "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 15
    while True:
        if process.poll() is not None:
            error = process.stderr.read().decode() if process.stderr else ""
            error += log.read_text(errors="replace") if log.exists() else ""
            if "Address already in use" in error or "Cannot bind any address" in error:
                raise _PortTaken(error)
            raise SSHDUnavailable(f"sshd exited at start: {error.strip()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise SSHDUnavailable("sshd did not start listening within 15 s") from None
            time.sleep(0.05)


def connection_processes(server: SSHServer) -> list[int]:
    """PIDs of the per-connection sshd processes (children of the listener)."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,ppid="], capture_output=True, text=True, check=True
    ).stdout
    return [
        int(pid)
        for pid, ppid in (line.split() for line in listing.splitlines())
        if int(ppid) == server.pid
    ]


def connection_tree(server: SSHServer) -> list[int]:
    """PIDs of every sshd process serving a connection (monitors and their session
    children), not the commands they run: stopping these hangs the links."""
    listing = subprocess.run(
        ["ps", "-eo", "pid=,ppid=,comm="], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split(None, 2) for line in listing.splitlines()]
    children: dict[int, list[tuple[int, str]]] = {}
    for pid, ppid, comm in rows:
        children.setdefault(int(ppid), []).append((int(pid), comm))
    found: list[int] = []
    frontier = [server.pid]
    while frontier:
        parent = frontier.pop()
        for pid, comm in children.get(parent, []):
            if comm.startswith("sshd"):
                found.append(pid)
                frontier.append(pid)
    return found


def make_passphrase_key(directory: Path, passphrase: str, server: SSHServer) -> Path:
    """A key protected by ``passphrase``, authorized on ``server``."""
    key = directory / "protected_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(key)], check=True
    )
    authorized = server.client_key.parent / "authorized_keys"
    with authorized.open("a") as handle:
        handle.write(key.with_suffix(".pub").read_text())
    return key
