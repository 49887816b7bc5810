"""The bubblewrap sandbox, for real: read-only root, writable workspace, no network."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from actors.policy.sandbox import Sandbox, bwrap_argv, find_bwrap

BWRAP = find_bwrap()
pytestmark = pytest.mark.skipif(BWRAP is None, reason="bwrap missing (apt-get install bubblewrap)")


def run(workdir: Path, command: str, network: bool = False) -> subprocess.CompletedProcess[str]:
    assert BWRAP is not None
    spec = Sandbox(writable=(str(workdir),), network=network)
    argv = bwrap_argv(BWRAP, spec, ["bash", "-c", command])
    return subprocess.run(argv, cwd=workdir, capture_output=True, text=True, timeout=30)


def test_system_paths_are_read_only(tmp_path: Path) -> None:
    result = run(tmp_path, "touch /etc/troupe-sandbox-test")
    assert result.returncode != 0
    assert "Read-only" in result.stderr
    assert not Path("/etc/troupe-sandbox-test").exists()


def test_the_working_directory_is_writable(tmp_path: Path) -> None:
    assert run(tmp_path, "echo ok > made.txt").returncode == 0
    assert (tmp_path / "made.txt").read_text() == "ok\n"


def test_no_network_unless_allowed(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        assert "connected" not in run(tmp_path, probe).stdout
        assert "connected" in run(tmp_path, probe, network=True).stdout
