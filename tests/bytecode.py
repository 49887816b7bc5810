"""Bytecode for the run, compiled once by the controller (tests/conftest.py calls it).

With ``PYTHONDONTWRITEBYTECODE=1`` (set on this machine, and common in CI) Python reads
``.pyc`` files but never writes them, so every ``troupe`` process a test starts, and
there are hundreds, compiled Troupe's own modules from source (about a third of an
import's CPU), and every pytest-xdist worker rewrote and compiled every test module
it collected. Here the controller writes both once, before the workers start:

- the product's packages and the suite's helpers as checked-hash ``.pyc`` files
  (PEP 552: valid only while the source's hash matches, so an edit, even one within
  the same second at the same size, is never run from a stale cache);
- pytest's own rewritten test modules and conftests, in its cache format (also
  checked-hash), which its import hook reads whatever ``dont_write_bytecode`` says.

Nothing here can fail the run: a file that does not compile, or a pytest whose
private rewrite helpers moved, only leaves that file to be compiled where imported.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import py_compile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("actors", "protocol", "environments", "tests")
"""The product's packages, and the suite's helpers that ``troupe`` processes import."""


def _is_test_module(path: Path) -> bool:
    """What pytest rewrites (``python_files`` and conftests)."""
    return path.name == "conftest.py" or path.name.startswith("test_")


def _hash_pyc_matches(path: Path, pyc: Path) -> bool:
    """A checked-hash ``.pyc`` of this Python whose hash is the source's."""
    try:
        with open(pyc, "rb") as cached:
            header = cached.read(16)
        source = path.read_bytes()
    except OSError:
        return False
    return (
        header[:4] == importlib.util.MAGIC_NUMBER
        and header[4:8] == b"\x03\x00\x00\x00"
        and header[8:16] == importlib.util.source_hash(source)
    )


def _compile_module(path: Path) -> None:
    pyc = Path(importlib.util.cache_from_source(str(path)))
    if not _hash_pyc_matches(path, pyc):
        py_compile.compile(
            str(path), str(pyc), doraise=False, quiet=2,
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )  # fmt: skip


def _rewrite_test_module(config: pytest.Config, path: Path) -> None:
    from _pytest.assertion.rewrite import (  # private: guarded by the caller
        PYC_TAIL,
        _rewrite_test,
        _write_pyc,
        assertstate_key,
        get_cache_dir,
    )

    cache = get_cache_dir(path)
    pyc = cache / (path.name[:-3] + PYC_TAIL)
    if _hash_pyc_matches(path, pyc):
        return  # still the source's
    cache.mkdir(exist_ok=True)
    source_hash, code = _rewrite_test(path, config)
    _write_pyc(config.stash[assertstate_key], code, source_hash, pyc)


def _compile(config: pytest.Config, paths: list[Path], rewrite: bool) -> None:
    for path in paths:
        try:
            if _is_test_module(path) and path.is_relative_to(REPO / "tests"):
                if rewrite:
                    _rewrite_test_module(config, path)
            else:
                _compile_module(path)
        except Exception:  # a cache, never a reason to fail the run
            continue


def precompile(config: pytest.Config) -> None:
    """Writes the run's bytecode where it is missing or out of date, on two cores:
    this process and a forked one (forked, so it sees this run's ``config``; nothing
    is pickled) each take every other file. Test modules are written only where
    assertions are rewritten; the rest always."""
    rewrite = getattr(config.option, "assertmode", "rewrite") == "rewrite"
    paths = sorted(p for name in PACKAGES for p in (REPO / name).rglob("*.py"))
    try:
        child = multiprocessing.get_context("fork").Process(
            target=_compile, args=(config, paths[1::2], rewrite), daemon=True
        )
        child.start()
    except (OSError, ValueError):  # no fork here: all of it in this process
        _compile(config, paths, rewrite)
        return
    try:
        _compile(config, paths[::2], rewrite)
    finally:
        child.join()


def wanted(config: pytest.Config) -> bool:
    """In the controller (or a run without workers), not in each xdist worker, and
    not where ``TROUPE_TEST_NO_PYC=1`` asks for no caches."""
    return not hasattr(config, "workerinput") and os.environ.get("TROUPE_TEST_NO_PYC") != "1"
