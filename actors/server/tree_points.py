"""Which workspace snapshot stands for a point of a session (docs/snapshots.md).

A code rewind to an input restores the snapshot taken at that input (``reason``
``input``, its ``input_seq``). A fork at an assistant message gets the tree as it
was once that answer's round had run: the first snapshot recorded after the
session's next model answer or input (a round's snapshot is taken before its
tools run, so the one right after the message itself would miss its changes);
when nothing came after it, the tree as it is now. Found in the stored events."""

from __future__ import annotations

import msgspec

from actors.kernel import ActorRef
from actors.store import Store
from actors.workspace import SnapshotError, take_snapshot
from protocol.events import (
    UnknownEventKind,
    UserInputEvent,
    WorkspaceSnapshotEvent,
    decode_event_data,
)
from protocol.session import SessionConfig, TreeSnapshot

_KINDS = ("user_input", "assistant_text_end", "workspace_snapshot")


class NoSnapshot(SnapshotError):
    def __init__(self, message: str) -> None:
        super().__init__("none", message)


def tree_snapshot(event: WorkspaceSnapshotEvent) -> TreeSnapshot:
    return TreeSnapshot(event.commit, event.root, event.shadow)


async def _points(store: Store, session_id: str) -> list[tuple[int, object]]:
    await store.flush()
    points: list[tuple[int, object]] = []
    for row in await store.events_of_kinds(session_id, *_KINDS):
        try:
            points.append((row.seq, decode_event_data(row.kind, row.data)))
        except (msgspec.DecodeError, msgspec.ValidationError, UnknownEventKind):
            continue
    return points


def _snapshots(points: list[tuple[int, object]]) -> list[tuple[int, WorkspaceSnapshotEvent]]:
    return [(seq, data) for seq, data in points if isinstance(data, WorkspaceSnapshotEvent)]


async def snapshot_at_input(store: Store, session_id: str, input_seq: int) -> TreeSnapshot:
    """The snapshot taken at the input of event ``input_seq``."""
    points = await _points(store, session_id)
    if not any(seq == input_seq and isinstance(d, UserInputEvent) for seq, d in points):
        raise NoSnapshot(f"event {input_seq} is not a user input of session {session_id}")
    for _, event in _snapshots(points):
        if event.reason == "input" and event.input_seq == input_seq:
            return tree_snapshot(event)
    raise NoSnapshot(
        f"no workspace snapshot was taken at input {input_seq} (snapshots off, or it "
        "failed: see the session's warnings); the code cannot be rewound to it"
    )


async def snapshot_at(
    store: Store, session_id: str, seq: int | None, environment: ActorRef, config: SessionConfig
) -> TreeSnapshot:
    """The tree as it was at event ``seq`` (a user input: just before it; an
    assistant message: after its round; None: now)."""
    points = await _points(store, session_id)
    snapshots = _snapshots(points)
    if not snapshots:
        raise NoSnapshot(
            f"session {session_id} has no workspace snapshot (snapshots off, or git "
            "missing): its working tree cannot be copied"
        )
    latest = tree_snapshot(snapshots[-1][1])
    if seq is not None and any(s == seq and isinstance(d, UserInputEvent) for s, d in points):
        return await snapshot_at_input(store, session_id, seq)
    later = [s for s, d in points if seq is not None and s > seq and not _is_snapshot(d)]
    if later:
        for at, event in snapshots:
            if at > later[0]:
                return tree_snapshot(event)
        raise NoSnapshot(f"no workspace snapshot was recorded after event {seq}")
    now = await take_snapshot(
        environment,
        root=latest.root,
        shadow=latest.shadow,
        max_file_bytes=config.snapshot_max_file_bytes,
    )
    return TreeSnapshot(now.commit, now.root, now.shadow)


def _is_snapshot(data: object) -> bool:
    return isinstance(data, WorkspaceSnapshotEvent)
