"""A real OpenSSH sshd for the tests, on a free loopback port, with its own config.

Never the machine's own sshd: this one has its own host key, authorized keys,
MaxSessions 10, and a SetEnv secret that environment filtering must hide. It lets
the tests log in as root and as an unprivileged user (created here when missing,
which needs root).
"""

from __future__ import annotations

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
SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd")


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


class SSHDUnavailable(Exception):
    """Why this machine cannot run the test sshd (the tests skip with this text)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ensure_test_user() -> str | None:
    """The unprivileged login, created when missing and we may; None if impossible."""
    try:
        pwd.getpwnam(TEST_USER)
        return TEST_USER
    except KeyError:
        pass
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        return None
    # Password "*": no password can match, yet the account is not locked ("!"),
    # which sshd without PAM would refuse even for key logins.
    subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/bash", "--password", "*", TEST_USER],
        check=True,
    )
    return TEST_USER


def start_sshd(directory: Path) -> tuple[subprocess.Popen[bytes], SSHServer]:
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
    port = _free_port()
    config = directory / "sshd_config"
    config.write_text(
        f"""Port {port}
ListenAddress 127.0.0.1
HostKey {host_key}
PidFile {directory / "sshd.pid"}
AuthorizedKeysFile {authorized}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
MaxSessions 10
MaxStartups 100:30:200
SetEnv {REMOTE_SECRET}
Subsystem sftp internal-sftp
LogLevel ERROR
"""
    )
    process = subprocess.Popen(
        [sshd, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 15
    while True:
        if process.poll() is not None:
            error = process.stderr.read().decode() if process.stderr else ""
            raise SSHDUnavailable(f"sshd exited at start: {error.strip()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise SSHDUnavailable("sshd did not start listening within 15 s") from None
            time.sleep(0.05)
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
    )


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
