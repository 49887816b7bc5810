"""The working tree as Troupe records it: snapshots in a shadow git repository
(:mod:`actors.workspace.snapshots`), the ground of code rewind and fork."""

from actors.workspace.snapshots import (
    DEFAULT_MAX_FILE_BYTES,
    MaterializedTree,
    RestoreReport,
    SkippedPath,
    SnapshotError,
    WorkspaceSnapshot,
    materialize_snapshot,
    restore_snapshot,
    take_snapshot,
)

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "MaterializedTree",
    "RestoreReport",
    "SkippedPath",
    "SnapshotError",
    "WorkspaceSnapshot",
    "materialize_snapshot",
    "restore_snapshot",
    "take_snapshot",
]
