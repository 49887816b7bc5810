"""A handful of corpus rows on an SSH host: the session works on the test sshd (a
real OpenSSH server on loopback, logging in as root to this machine), with the
same canaries, listeners and fake secrets, under the defaults and with the
sandbox off. The rows only aim at the test's root: the remote HOME is the real
one, so no row here touches ``~``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.environments import conftest as environment_fixtures
from tests.environments.sshd import SSHServer
from tests.security.corpus import build_corpus
from tests.security.runner import run_corpus

sshd = environment_fixtures.sshd

SSH_ROWS = (
    "writes-redirect", "writes-rm", "writes-sed-i", "writes-python-write", "writes-absolute",
    "forms-base64-sh", "forms-env-S", "forms-brace-expansion", "network-bash-dev-tcp-redirect",
    "network-python-socket", "secrets-env", "filetools-write-dotdot",
    "filetools-write-symlink-dir", "patch-add-indent-space", "hardlink-ln-canary-then-write",
    "escape-proc-pid-root-write",
)  # fmt: skip
ROWS = [r for r in build_corpus(fork_bombs=False) if f"{r.cls}-{r.name}" in SSH_ROWS]


@pytest.mark.parametrize("setting", ["default", "sandbox-off"])
async def test_ssh_rows(setting: str, sshd: SSHServer, seen_tmp_path: Path) -> None:
    assert len(ROWS) == len(SSH_ROWS)
    root = seen_tmp_path
    run = await run_corpus(ROWS, root, setting, ssh=sshd)
    problems = [f"{o.row.id}: {f}" for o in run.outcomes.values() for f in o.findings]
    assert not problems
    assert not run.unattributed
