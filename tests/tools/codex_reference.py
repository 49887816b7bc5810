"""The real codex ``apply_patch``, fetched from npm into a project-local cache.

The npm package ``@openai/codex`` ships codex's native binary in a platform
package (``@openai/codex-linux-x64`` and friends). Started with ``argv[0] ==
"apply_patch"`` that binary runs codex's own apply_patch: the patch is its one
argument, it works in its current directory, prints the summary on stdout and exits
0, or prints the error on stderr and exits 1. The differential tests compare
Troupe's engine with it.

The version is pinned so a run today and a run next month judge the same codex.
The cache (``.cache/codex/<version>`` at the project root) is gitignored; it is
filled once, atomically, so parallel test runs never see half an install.

Stdlib only: ``.ci/run`` calls ``python3 tests/tools/codex_reference.py`` to fill
the cache before the virtual environment exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.169.0"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
CACHE = PROJECT_ROOT / ".cache" / "codex" / CODEX_VERSION
INSTALL_TIMEOUT_S = 900


class CodexUnavailable(Exception):
    """Why codex cannot be had here (the differential tests skip with this text)."""


def find_binary(cache: Path = CACHE) -> Path | None:
    """The native codex binary inside an installed cache, if there is one."""
    pattern = "node_modules/@openai/codex-*/vendor/*/bin/codex"
    found = sorted(path for path in cache.glob(pattern) if os.access(path, os.X_OK))
    return found[0] if found else None


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise CodexUnavailable("npm is not installed, so codex cannot be fetched")
    return npm


def _registry_reachable(npm: str) -> bool:
    try:
        done = subprocess.run(
            [npm, "ping"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def install(cache: Path = CACHE) -> Path:
    """Install the pinned codex into ``cache`` (if it is not there) and return the
    binary. Raises :class:`CodexUnavailable` only when npm or its registry cannot be
    reached; any other failure is an error worth seeing, so it raises RuntimeError.
    """
    binary = find_binary(cache)
    if binary is not None:
        return binary
    npm = _npm()
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{cache.name}-", dir=cache.parent))
    staging.chmod(0o755)
    try:
        command = [
            npm,
            "install",
            "--prefix",
            str(staging),
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{CODEX_PACKAGE}@{CODEX_VERSION}",
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            done = None
        if done is None or done.returncode != 0:
            if not _registry_reachable(npm):
                raise CodexUnavailable(
                    "the npm registry is unreachable, so codex cannot be fetched"
                )
            detail = "timed out" if done is None else (done.stderr or done.stdout).strip()
            raise RuntimeError(f"npm install {CODEX_PACKAGE}@{CODEX_VERSION} failed: {detail}")
        if find_binary(staging) is None:
            raise CodexUnavailable(
                f"{CODEX_PACKAGE}@{CODEX_VERSION} has no native binary for this platform"
            )
        try:
            staging.rename(cache)
        except OSError:
            if find_binary(cache) is None:  # not a concurrent install that won the race
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    binary = find_binary(cache)
    assert binary is not None
    return binary


def run_codex_apply_patch(
    binary: Path, patch: str, cwd: Path, home: Path
) -> subprocess.CompletedProcess[bytes]:
    """Run codex's apply_patch on ``patch`` in ``cwd``: argv[0] selects it.

    The patch is its argument, as a model's call passes it, or its standard input
    when it holds a NUL, which no argument can carry. ``home`` keeps codex away
    from the user's own configuration.
    """
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    environment["CODEX_HOME"] = str(home / ".codex")
    through_stdin = "\0" in patch
    return subprocess.run(
        ["apply_patch"] if through_stdin else ["apply_patch", patch],
        input=patch.encode() if through_stdin else b"",
        executable=str(binary),
        cwd=cwd,
        env=environment,
        capture_output=True,
        timeout=60,
        check=False,
    )


def main() -> int:
    """Fill the cache for CI. Never fails the CI step: when codex cannot be had, the
    differential tests skip (npm unreachable) or fail (anything else) with the cause."""
    try:
        binary = install()
    except (CodexUnavailable, RuntimeError, OSError) as reason:
        print(f"codex apply_patch reference not installed: {reason}", file=sys.stderr)
        return 0
    print(f"codex apply_patch reference: {binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
