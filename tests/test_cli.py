"""The installed ``troupe`` command answers --version and --help."""

from __future__ import annotations

import shutil
import subprocess
import sys

from actors.cli import version


def troupe(*args: str) -> subprocess.CompletedProcess[str]:
    command = shutil.which("troupe")
    argv = [command] if command else [sys.executable, "-m", "actors.cli"]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=60)


def test_version() -> None:
    done = troupe("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"troupe {version()}"
    assert version() != "unknown", "the distribution should be installed for the tests"


def test_the_version_is_written_once() -> None:
    """The installed metadata's version is built from ``actors.__version__``."""
    from importlib import metadata

    import actors

    assert metadata.version("troupe-agents") == actors.__version__ == version()


def test_help() -> None:
    done = troupe("--help")
    assert done.returncode == 0
    assert "actor-based runtime for coding agents" in done.stdout
