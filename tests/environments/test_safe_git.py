"""Troupe's own git commands run nothing the repository names (real git, real repo)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from environments.safe_git import SAFE_GIT_ENV, safe_git_argv


def test_diff_status_and_log_with_planted_programs_run_none_of_them(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    canary = tmp_path / "canary"
    plant = tmp_path / "plant.sh"
    plant.write_text(f"#!/bin/sh\ntouch {canary}\ncat\n")
    plant.chmod(0o755)
    identity = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    (repo / ".gitattributes").write_text("*.txt diff=planted\n")
    subprocess.run(["git", *identity, "add", "."], cwd=repo, check=True)
    subprocess.run(["git", *identity, "commit", "-qm", "x"], cwd=repo, check=True)
    for key in ("core.fsmonitor", "diff.external", "core.pager", "diff.planted.textconv"):
        subprocess.run(["git", "config", key, str(plant)], cwd=repo, check=True)
    hooks = repo / ".git" / "hooks"
    (hooks / "post-checkout").write_text(f"#!/bin/sh\ntouch {canary}\n")
    (hooks / "post-checkout").chmod(0o755)
    (repo / "a.txt").write_text("two\n")
    env = {**os.environ, **SAFE_GIT_ENV}
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True, env=os.environ)
    assert canary.exists(), "the plants work on plain git (else this test proves nothing)"
    canary.unlink()
    for args in (("status", "--porcelain"), ("diff",), ("log", "-p", "-n", "1"),
                 ("show", "HEAD"), ("checkout", "-q", "-b", "other")):  # fmt: skip
        done = subprocess.run(safe_git_argv(*args), cwd=repo, capture_output=True, env=env)
        assert done.returncode == 0, (args, done.stderr)
        assert not canary.exists(), args
    diff = subprocess.run(safe_git_argv("diff"), cwd=repo, capture_output=True, text=True, env=env)
    assert "+two" in diff.stdout
