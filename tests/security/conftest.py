"""One live run of the whole corpus per setting, shared by the tests of the module
(a run takes a minute or two; each row's test reads its outcome)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from environments.sandbox import find_bwrap
from tests.security.corpus import build_corpus
from tests.security.rows import Row
from tests.security.runner import Run, cgroup_available, run_corpus

SEEN_TMP = "/var/tmp"
"""Where worlds live. The sandbox's /tmp is private: a world under /tmp (pytest's
``tmp_path``) would be invisible inside it - HOME, its secrets and ``outside`` -
so a default-setting row would prove nothing about hidden paths, and an ordinary
``git commit`` would miss the user's ``~/.gitconfig``."""


def seen_directory(prefix: str) -> Path:
    """A fresh directory the sandbox sees as it is (remove it with ``shutil.rmtree``)."""
    return Path(os.path.realpath(tempfile.mkdtemp(prefix=prefix, dir=SEEN_TMP)))


@pytest.fixture
def seen_tmp_path() -> Iterator[Path]:
    """Like ``tmp_path``, outside the sandbox's private /tmp."""
    directory = seen_directory("troupe-sec-")
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def corpus_rows() -> list[Row]:
    """The corpus; ``TROUPE_SEC_ROWS`` (a regex on row ids) narrows it while debugging."""
    rows = build_corpus(fork_bombs=cgroup_available())
    pattern = os.environ.get("TROUPE_SEC_ROWS")
    return [r for r in rows if re.search(pattern, r.id)] if pattern else rows


_RUNS: dict[str, Run] = {}
SETTINGS = ("default", "sandbox-off")


async def _run_both(roots: dict[str, Path]) -> None:
    """Both settings at once: each has its own root, server and listeners."""
    rows = corpus_rows()

    async def one(setting: str) -> None:
        _RUNS[setting] = await run_corpus(rows, roots[setting], setting)

    async with trio.open_nursery() as nursery:
        for setting in SETTINGS:
            nursery.start_soon(one, setting)


def _run(setting: str, factory: pytest.TempPathFactory) -> Run:
    if setting not in _RUNS:
        if find_bwrap() is None:
            pytest.fail("bwrap is missing: the corpus needs the real sandbox")
        roots = {s: seen_directory(f"troupe-sec-{s}-") for s in SETTINGS}
        try:
            trio.run(_run_both, roots)
        finally:
            for root in roots.values():
                shutil.rmtree(root, ignore_errors=True)
    return _RUNS[setting]


@pytest.fixture(scope="session")
def default_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    yield _run("default", tmp_path_factory)


@pytest.fixture(scope="session")
def sandbox_off_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    yield _run("sandbox-off", tmp_path_factory)
