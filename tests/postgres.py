"""A real PostgreSQL for the tests: ``initdb`` into a temporary directory, a
Unix socket only (no TCP port at all), started and stopped here.

The binaries are found on ``PATH`` or in Debian's ``/usr/lib/postgresql/N/bin``
(the ``postgresql`` package puts them there; ``.ci/run`` installs it). PostgreSQL
refuses to run as root, so under root the cluster belongs to the ``postgres``
account (else ``nobody``). Each test gets a database of its own in the one
cluster of the test session; the store-fault tests stop and start the cluster
under a running server with :meth:`PostgresCluster.stop` and :meth:`start`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "troupe"
PORT = 5432
"""Only the socket file's name (``.s.PGSQL.5432``): the cluster listens on no TCP port."""
DEBIAN_BINDIRS = Path("/usr/lib/postgresql")


class PostgresUnavailable(Exception):
    """No PostgreSQL binaries here, or the cluster would not start (why, in words)."""


def find_bindir() -> Path | None:
    """The directory of ``initdb``, ``pg_ctl`` and ``postgres``: on PATH, else the
    newest of Debian's versioned directories."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    versions = sorted(
        (p for p in DEBIAN_BINDIRS.glob("*/bin") if (p / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return versions[-1] if versions else None


def _owner() -> str | None:
    """The account the cluster runs as when we are root (None: as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise PostgresUnavailable("running as root and no postgres or nobody account to run as")


@dataclass(frozen=True)
class PostgresCluster:
    bindir: Path
    root: Path
    owner: str | None
    durable: bool = False
    """fsync on (PostgreSQL's default: each commit on disk), for benchmarks; tests
    run without it, which no test can tell apart (no test cuts the power)."""

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    @property
    def log(self) -> Path:
        return self.root / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={PORT}"

    def _run(self, *command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bindir / command[0]), *command[1:]],
            user=self.owner, capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def start(self) -> None:
        options = f"-c listen_addresses='' -k {self.socket_dir} -p {PORT} -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c full_page_writes=off"
        done = self._run(
            "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.log),
            "-o", options,
        )  # fmt: skip
        if done.returncode != 0:
            raise PostgresUnavailable(f"pg_ctl start failed: {done.stderr.strip()}")

    def stop(self) -> None:
        """A fast shutdown: sessions ended, the server down until :meth:`start`."""
        done = self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))
        if done.returncode != 0:
            raise PostgresUnavailable(f"pg_ctl stop failed: {done.stderr.strip()}")

    def running(self) -> bool:
        return self._run("pg_ctl", "status", "-D", str(self.data)).returncode == 0

    def create_database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            # PostgreSQL 15 copies the template through the WAL by default; a plain
            # file copy of the small template is about twice as fast per test.
            strategy = " STRATEGY FILE_COPY" if connection.info.server_version >= 150000 else ""
            connection.execute(f"CREATE DATABASE {name}{strategy}".encode())
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.split("/")[3].split("?")[0]
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


def start_cluster(durable: bool = False) -> PostgresCluster:
    """initdb and start a cluster of our own; :func:`remove_cluster` at the end."""
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable(
            "no PostgreSQL binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql"
            " (install Debian's postgresql package)"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise PostgresUnavailable("psycopg is not installed (pip install -e '.[test]')") from None
    owner = _owner()
    root = Path(tempfile.mkdtemp(prefix="troupe-pg-"))
    cluster = PostgresCluster(bindir, root, owner, durable)
    cluster.socket_dir.mkdir()
    if owner is not None:
        account = pwd.getpwnam(owner)
        for path in (root, cluster.socket_dir):
            os.chown(path, account.pw_uid, account.pw_gid)
    done = cluster._run(
        "initdb", "-D", str(cluster.data), "-U", SUPERUSER, "--auth=trust", "--no-sync",
        "-E", "UTF8", "--locale=C",
    )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"initdb failed: {done.stderr.strip()[-500:]}")
    try:
        cluster.start()
    except PostgresUnavailable:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return cluster


def remove_cluster(cluster: PostgresCluster) -> None:
    if cluster.running():
        cluster._run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", str(cluster.data))
    shutil.rmtree(cluster.root, ignore_errors=True)
