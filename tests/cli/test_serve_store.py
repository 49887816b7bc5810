"""``troupe serve --store`` and ``store =`` in the config file choose the store's
backend; a bad setting is bad input in one line (exit 2), a database that cannot
be reached at start is the typed store fault in one line (exit 1), and a
project's config file cannot point the server at a database until trusted."""

from __future__ import annotations

import signal
import subprocess

import trio

from tests.cli.conftest import Home, one_line
from tests.postgres import PostgresCluster

HANG_GUARD = 30


async def test_an_unknown_store_is_bad_input(home: Home) -> None:
    done = await home.troupe("serve", "--port", "0", "--store", "mysql://u:secret@db/x")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "unknown store" in line and "secret" not in line


async def test_an_unreachable_database_at_start_is_one_typed_line(home: Home) -> None:
    url = f"postgresql://troupe:hunter2@/troupe?host={home.root / 'no-such-socket-dir'}"
    done = await home.troupe("serve", "--port", "0", "--store", url)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith("troupe serve: store_unavailable: cannot open the store postgresql://")
    assert "hunter2" not in line


async def test_the_config_file_chooses_postgresql(
    home: Home, postgres: PostgresCluster, postgres_url: str
) -> None:
    home.config.write_text(f'store = "{postgres_url}"\n')
    shown = await home.troupe("config")
    assert "store" in shown.stdout.decode() and str(home.config) in shown.stdout.decode()
    serve = home.start("serve", "--port", "0", stdout=subprocess.PIPE)
    try:
        assert serve.stdout is not None
        with trio.fail_after(HANG_GUARD):
            lines = [await trio.to_thread.run_sync(serve.stdout.readline) for _ in range(3)]
        store_line = next(line.decode() for line in lines if line.startswith(b"store:"))
        assert store_line.startswith("store: postgresql://troupe@")
        assert not (home.data / "troupe.db").exists()
    finally:
        serve.send_signal(signal.SIGTERM)
        with trio.fail_after(HANG_GUARD):
            await trio.to_thread.run_sync(serve.wait)
    assert serve.returncode == 0


async def test_an_untrusted_projects_store_is_ignored_and_said(home: Home) -> None:
    (home.work / ".troupe").mkdir()
    (home.work / ".troupe" / "config.toml").write_text('store = "postgresql://x@evil/db"\n')
    shown = await home.troupe("config", "--json")
    assert shown.returncode == 0, shown.stderr
    assert b"store" in shown.stderr and b"evil" not in shown.stdout
