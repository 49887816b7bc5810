"""The session's snapshots of its working tree (docs/snapshots.md): one at each
user input, before the model is asked, and one before each round that runs a
mutating tool, each a durable ``workspace_snapshot`` event that a code rewind
finds by the input's sequence number.

A snapshot is a convenience, never a condition: one that fails becomes a warning
(once per kind of failure in a session) and the input goes on. A host without git
(or with a git too old) gets one warning and no further attempt. Snapshots off
(``snapshots = false``) cost nothing: the setting is checked before anything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import trio

from actors.kernel import ActorRef
from actors.session.events import EventHub
from actors.tools.registry import ToolRegistry
from actors.workspace import SnapshotError, WorkspaceSnapshot, take_snapshot
from protocol.events import WarningEvent, WorkspaceSnapshotEvent
from protocol.llm import ToolCall
from protocol.session import SessionConfig

WARNING_KIND = "workspace_snapshot"
_FOR_GOOD = ("git-missing", "git-old")
"""Failures no later attempt in this session can get past."""

SnapshotReason = Literal["input", "round"]

SLOW_NOTICE_S = 5.0
"""A snapshot still running after this long (the first of a large tree hashes every
file) is announced once, so the wait is not a mystery."""


def mutating(calls: Sequence[ToolCall], registry: ToolRegistry) -> bool:
    """Whether a round may change the tree: a call of a tool that declares it may
    (by default, one whose category is not ``read``; shell commands are ``write``
    whatever they say; an unknown tool counts as mutating)."""
    for call in calls:
        tool = registry.get(call.name)
        if tool is None or tool.is_mutating:
            return True
    return False


class TreeSnapshots:
    """Takes the snapshots of one session's tree (``root``) in ``environment``, into
    the shadow repository under ``shadow_base`` (None: the host's default)."""

    def __init__(
        self, hub: EventHub, environment: ActorRef, root: str, shadow_base: str | None
    ) -> None:
        self.hub = hub
        self.environment = environment
        self.root = root
        self.shadow_base = shadow_base
        self._warned: set[str] = set()
        self._given_up = False
        self.slow_notice_s = SLOW_NOTICE_S

    async def take(self, reason: SnapshotReason, input_seq: int, config: SessionConfig) -> None:
        """Snapshot now and record it; a failure is a warning, never an error."""
        if not config.snapshots or self._given_up:
            return
        try:
            snapshot = await self._take(config)
        except SnapshotError as error:
            self._given_up = error.reason in _FOR_GOOD
            self._warn(error)
            return
        except Exception as error:  # never the input's failure (cancellation passes)
            self._warn(SnapshotError("unexpected", f"{type(error).__name__}: {error}"))
            return
        self.hub.emit(
            WorkspaceSnapshotEvent(
                commit=snapshot.commit,
                reason=reason,
                input_seq=input_seq,
                root=snapshot.root,
                shadow=snapshot.shadow,
                files=snapshot.files,
                skipped=[skipped.path for skipped in snapshot.skipped],
                skipped_total=snapshot.skipped_total,
            )
        )

    async def _take(self, config: SessionConfig) -> WorkspaceSnapshot:
        """The snapshot, with a notice (once a session) if it takes long."""
        outcome: WorkspaceSnapshot | Exception
        async with trio.open_nursery() as nursery:
            if "slow" not in self._warned:
                nursery.start_soon(self._notice_when_slow)
            try:
                outcome = await take_snapshot(
                    self.environment,
                    root=self.root,
                    shadow_base=self.shadow_base,
                    max_file_bytes=config.snapshot_max_file_bytes,
                )
            except Exception as error:  # raised here, not wrapped in the nursery's group
                outcome = error
            nursery.cancel_scope.cancel()
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def _notice_when_slow(self) -> None:
        await trio.sleep(self.slow_notice_s)
        self._warned.add("slow")
        message = (
            f"recording the working tree {self.root} for code rewind (the first time a "
            "tree is seen, every file is read; later snapshots are quick); "
            "snapshots = false switches this off"
        )
        self.hub.emit(WarningEvent(message, WARNING_KIND))

    def _warn(self, error: SnapshotError) -> None:
        if error.reason in self._warned:
            return
        self._warned.add(error.reason)
        then = (
            "workspace snapshots are off for this session"
            if self._given_up
            else "this input goes on without one"
        )
        message = f"workspace snapshot failed: {error}; {then} (code rewind needs them)"
        self.hub.emit(WarningEvent(message, WARNING_KIND))
