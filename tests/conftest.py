"""Fixtures every test directory may use: a real PostgreSQL (tests/postgres.py) and
the store the servers of ``start_stack`` (tests/wire/conftest.py) keep their sessions
in, wherever a test imports that fixture. And how the suite is run (tests/selection.py):
the ``style`` checks apart from the main run, the ``slow`` tests the inner loop leaves
out, and the tests that share one expensive run kept on one pytest-xdist worker."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from tests.bytecode import precompile, wanted
from tests.interpreters import bypass_python3_shim
from tests.postgres import PostgresCluster, PostgresUnavailable, remove_cluster, start_cluster
from tests.scheduling import is_worker, keep_collection_order, longest_first
from tests.selection import mark_and_select


@pytest.hookimpl(tryfirst=True)  # before pytest's -m filter and xdist's grouping read marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_and_select(config, items)
    if is_worker(config):  # what a worker collects is the order xdist hands files out
        longest_first(items)


def pytest_configure(config: pytest.Config) -> None:
    """A worker that crashes is not replaced (``--max-worker-restart`` 0 unless given):
    xdist 3.8's ``loadfile`` scheduler re-runs the test that crashed the worker and
    then waits forever for work it already handed out (pytest-xdist issues 1323,
    1371, 1378), so one crash turned a CI run into a timeout. Now the crash is a
    failure naming the test, and the run ends."""
    if getattr(config.option, "maxworkerrestart", "") is None:
        config.option.maxworkerrestart = "0"
    interruptible_children()
    if not is_worker(config):
        keep_collection_order(config)
        bypass_python3_shim()  # before the workers start: they inherit the PATH
    if wanted(config):  # the product's bytecode once, before any worker or test starts
        precompile(config)


def interruptible_children() -> None:
    """Gives the run Ctrl-C's default meaning where it was started ignoring it.

    A command started in the background by a shell without job control (``( cmd & )``,
    many CI runners and scripts) starts with SIGINT ignored, and an
    ignored signal stays ignored across ``exec``: every process the tests start would
    ignore the Ctrl-C the startup and terminal tests send it (a user at a terminal
    never starts Troupe that way), and those tests failed only in such runs. A
    handled signal is reset to its default in a child, so Python's own handler here
    is enough; where SIGINT has a handler already nothing changes."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(optionalhook=True)  # a venv without pytest-xdist still runs the suite
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per CPU and one more, at least three. A worker spends
    about 45% of its time waiting (servers starting, processes, the timeouts tests
    are about), and three on two cores took the pytest step from 447-502 s to about
    400 s at the same CPU. The races that load shook out at three (a store
    outage's replay, a click into a re-drawn page, an SSH caller cancelled while
    its command started, a fleet request taken by a session's next owner) were the
    product's or the tests' and are mended (docs/decisions.md). Four were worse
    still on a slower machine. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return max(3, (os.cpu_count() or 1) + 1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """One PostgreSQL cluster for the test session (skips, saying why, without one)."""
    try:
        cluster = start_cluster()
    except PostgresUnavailable as reason:
        pytest.skip(f"no test PostgreSQL: {reason}")
    try:
        yield cluster
    finally:
        remove_cluster(cluster)


@pytest.fixture
def postgres_url(postgres: PostgresCluster) -> Iterator[str]:
    """A fresh database of the session's cluster, dropped after the test."""
    if not postgres.running():  # a fault test that failed midway left it stopped
        postgres.start()
    url = postgres.create_database()
    try:
        yield url
    finally:
        if postgres.running():
            postgres.drop_database(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_setting(request: pytest.FixtureRequest) -> str:
    """The ``--store`` of a test run once per backend: "" (SQLite in the data
    directory) and a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return ""
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(request: pytest.FixtureRequest) -> str:
    """The servers' ``--store``: SQLite in the data directory, or a fresh
    PostgreSQL database with ``TROUPE_TEST_STORE=postgresql`` in the environment
    (every test of this directory that starts its server through ``start_stack``
    then runs on PostgreSQL). A test run on both backends every time says so with
    ``@BOTH_STORES`` (tests/wire/conftest.py), a module by overriding this with
    ``store_setting``."""
    backend = getattr(request, "param", None) or os.environ.get("TROUPE_TEST_STORE")
    if backend == "postgresql":
        return request.getfixturevalue("postgres_url")
    return ""
