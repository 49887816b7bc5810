"""Snapshots of a working tree in a shadow git repository, through the environment.

The API rewind and fork use (every function takes the environment's ref first):

- ``await take_snapshot(environment, *, root=None, shadow_base=None,
  max_file_bytes=DEFAULT_MAX_FILE_BYTES, shadow=None) -> WorkspaceSnapshot``:
  record the tree under ``root`` (default: the environment's working directory)
  as a commit.
- ``await restore_snapshot(environment, commit, *, root=None, shadow_base=None,
  max_file_bytes=DEFAULT_MAX_FILE_BYTES, shadow=None) -> RestoreReport``: bring
  the tree back to ``commit`` byte for byte (content and executable bit; symbolic
  links as links): files changed since get their old content, files created since
  are deleted, files deleted since are recreated. Ignored files, and files over
  the size cap now or when the snapshot was taken, are left alone. The tree is
  snapshotted first (``RestoreReport.before``), so a restore can itself be undone.
- ``await materialize_snapshot(environment, commit, dest_dir, *, root=None,
  shadow_base=None, shadow=None) -> MaterializedTree``: write the tree of
  ``commit`` into ``dest_dir`` (new, or an empty directory), for a fork's own
  working tree.

Pass the same ``root`` and ``shadow_base`` to all three: they name the shadow
repository, ``<shadow_base>/<hash of root>`` on the environment's host (default
base ``${XDG_CACHE_HOME:-~/.cache}/troupe/shadow``; the server gives local
sessions its data directory's ``shadow/``). Or pass ``shadow``, the exact
directory a :class:`WorkspaceSnapshot` (or the ``workspace_snapshot`` event,
which also records ``root``) names: it wins over ``shadow_base``. Failures raise
:class:`SnapshotError` (its ``reason``: ``git-missing``, ``git-old``,
``unknown``, ``shadow``, ...).

Why through the environment: each operation is one shell command the environment
runs (:mod:`actors.workspace.shadow_script`), so it works unchanged on this machine,
over SSH and in any later kind that can run a command, and it sees the tree as the
model's commands left it, not as Troupe's own edits did. Why a shadow repository:
git's index makes every snapshot after the first cost a ``stat`` per file, the
object store shares unchanged content between snapshots, ``.gitignore`` rules come
for free, and ``--git-dir``/``--work-tree`` keep the user's own repository
untouched (the tree need not be a repository at all). Safety: this is Troupe's own
operation, so it runs without the sandbox, and therefore must not be steerable by
the tree: see the script module for what is switched off; symbolic links are
recorded as links and never followed, on the way in or out.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

import msgspec

from actors.kernel import ActorError, ActorRef, Rejection
from actors.workspace.shadow_script import (
    ERROR_MARK,
    MATERIALIZE_MARK,
    RESTORE_MARK,
    SNAPSHOT_MARK,
    materialize_script,
    restore_script,
    snapshot_script,
)
from protocol.environment import Describe, ExecCommand, ExecResult

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files larger than this are left out of snapshots (and named in ``skipped``)."""

TIMEOUT_MS = 600_000
"""The first snapshot of a large tree hashes every file; later ones take little."""

SKIPPED_SHOWN = 200
"""Skipped paths kept in a :class:`WorkspaceSnapshot` (``skipped_total`` counts all)."""

_COMMIT = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


class SnapshotError(Rejection):
    """A snapshot, restore or materialization that could not be made; ``reason`` is
    a short stable name (``git-missing``, ``git-old``, ``unknown``, ``dest``,
    ``shadow``, ``busy``, ``environment``, ...)."""

    code = "snapshot_failed"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class SkippedPath(msgspec.Struct, frozen=True):
    """A path left out of a snapshot: a file over the size cap (``large``) or a
    repository nested in the tree (``repository``: its own git keeps it)."""

    path: str
    reason: Literal["large", "repository"]


class WorkspaceSnapshot(msgspec.Struct, frozen=True):
    """One recorded state of a working tree: ``commit`` in the shadow repository
    ``shadow`` on the environment's host. ``files`` counts what it holds;
    ``warnings`` is git's complaint about files it could not read (left out)."""

    commit: str
    root: str
    shadow: str
    files: int
    skipped: tuple[SkippedPath, ...] = ()
    skipped_total: int = 0
    warnings: str = ""


class RestoreReport(msgspec.Struct, frozen=True):
    """What a restore to ``commit`` did: ``changed`` files got their old content or
    mode back, ``recreated`` ones had been deleted since, ``deleted`` ones had been
    created since. ``before`` is the snapshot taken just before (restore to it to
    undo this one)."""

    commit: str
    root: str
    before: str
    changed: tuple[str, ...] = ()
    recreated: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()


class MaterializedTree(msgspec.Struct, frozen=True):
    """The tree of ``commit`` written into ``directory`` (``files`` of them)."""

    commit: str
    directory: str
    files: int


def shadow_key(root: str) -> str:
    """The shadow repository's directory name for a tree root."""
    return hashlib.sha256(root.encode()).hexdigest()[:24]


async def take_snapshot(
    environment: ActorRef,
    *,
    root: str | None = None,
    shadow_base: str | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    shadow: str | None = None,
) -> WorkspaceSnapshot:
    """Record the tree under ``root`` now; see the module's docstring."""
    root = root or await _working_directory(environment)
    script = snapshot_script(root, *_where(root, shadow_base, shadow), max_file_bytes)
    result = await _run(environment, script)
    head, tail = _split(result, SNAPSHOT_MARK)
    fields = tail.split(" ", 4)
    if len(fields) != 4 or not _COMMIT.fullmatch(fields[0]):
        raise SnapshotError("output", f"unexpected output from the snapshot: {tail[:200]!r}")
    commit, count, add_status, shadow = fields
    listed, _, warnings = head.rpartition("\n#troupe-adderr ")
    skipped = _skipped(listed)
    return WorkspaceSnapshot(
        commit=commit,
        root=root,
        shadow=shadow,
        files=int(count or 0),
        skipped=tuple(skipped[:SKIPPED_SHOWN]),
        skipped_total=len(skipped),
        warnings=warnings.strip() if add_status != "0" else "",
    )


async def restore_snapshot(
    environment: ActorRef,
    commit: str,
    *,
    root: str | None = None,
    shadow_base: str | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    shadow: str | None = None,
) -> RestoreReport:
    """Bring the tree under ``root`` back to ``commit``; see the module's docstring."""
    _check_commit(commit)
    root = root or await _working_directory(environment)
    script = restore_script(root, *_where(root, shadow_base, shadow), max_file_bytes, commit)
    result = await _run(environment, script)
    head, before = _split(result, RESTORE_MARK)
    changed: list[str] = []
    recreated: list[str] = []
    deleted: list[str] = []
    parts = head.split("\0")
    # ``git diff-index --cached TARGET``: the index (the tree now) against the
    # target. A: only now (deleted by the restore); D: only then (recreated).
    for status, path in zip(parts[0::2], parts[1::2], strict=False):
        match status.strip()[:1]:
            case "A":
                deleted.append(path)
            case "D":
                recreated.append(path)
            case "M" | "T":
                changed.append(path)
            case _:
                pass
    return RestoreReport(
        commit=commit,
        root=root,
        before=before.strip(),
        changed=tuple(changed),
        recreated=tuple(recreated),
        deleted=tuple(deleted),
    )


async def materialize_snapshot(
    environment: ActorRef,
    commit: str,
    dest_dir: str,
    *,
    root: str | None = None,
    shadow_base: str | None = None,
    shadow: str | None = None,
) -> MaterializedTree:
    """Write the tree of ``commit`` into ``dest_dir``; see the module's docstring."""
    _check_commit(commit)
    if not dest_dir or "\0" in dest_dir:
        raise SnapshotError("dest", "the destination directory must be a path")
    root = root or await _working_directory(environment)
    script = materialize_script(root, *_where(root, shadow_base, shadow), commit, dest_dir)
    result = await _run(environment, script)
    _, tail = _split(result, MATERIALIZE_MARK)
    count, _, directory = tail.partition(" ")
    return MaterializedTree(commit=commit, directory=directory, files=int(count or 0))


def _where(root: str, shadow_base: str | None, shadow: str | None) -> tuple[str, str]:
    """(base, key) for the scripts: an exact ``shadow`` directory (as a
    :class:`WorkspaceSnapshot` or its event names it) wins over ``shadow_base``."""
    if shadow:
        return shadow, ""
    return shadow_base or "", shadow_key(root)


def _check_commit(commit: str) -> None:
    if not _COMMIT.fullmatch(commit):
        raise SnapshotError("unknown", f"not a snapshot id: {commit[:80]!r}")


async def _working_directory(environment: ActorRef) -> str:
    try:
        return (await environment.ask(Describe())).working_directory
    except ActorError as error:
        raise SnapshotError("environment", f"the environment did not answer: {error}") from None


async def _run(environment: ActorRef, script: str) -> ExecResult:
    try:
        return await environment.ask(
            ExecCommand(script, timeout_ms=TIMEOUT_MS), timeout=TIMEOUT_MS / 1000 + 30
        )
    except ActorError as error:
        raise SnapshotError("environment", f"the environment refused: {error}") from None


def _split(result: ExecResult, mark: str) -> tuple[str, str]:
    """The output before the final ``mark`` line, and that line's fields; a failure
    the script reported (or a command that died) as a :class:`SnapshotError`."""
    out = result.stdout
    error_at = out.rfind(f"\n{ERROR_MARK} ")
    if error_at >= 0:
        reason, _, message = out[error_at + len(ERROR_MARK) + 2 :].strip().partition(" ")
        raise SnapshotError(reason, message or reason)
    at = out.rfind(f"\n{mark} ")
    if at < 0 or result.exit_code != 0:
        if result.timed_out:
            raise SnapshotError("timeout", "the snapshot took too long and was stopped")
        detail = (result.stderr.strip() or out.strip())[-500:]
        raise SnapshotError("failed", f"exit {result.exit_code}: {detail}")
    return out[:at], out[at + len(mark) + 2 :].rstrip("\n")


def _skipped(listed: str) -> list[SkippedPath]:
    found: list[SkippedPath] = []
    for entry in listed.split("\0"):
        if entry[:1] == "L":
            found.append(SkippedPath(entry[1:], "large"))
        elif entry[:1] == "R":
            found.append(SkippedPath(entry[1:], "repository"))
    return found
