"""The session's snapshots of its working tree (docs/snapshots.md): one at each
user input, before the model is asked, and one before each round that runs a
mutating tool, each a durable ``workspace_snapshot`` event that a code rewind
finds by the input's sequence number.

A session's first input may start its snapshot early (:meth:`TreeSnapshots.start_early`):
its git and shell processes then run alongside the session's first preparation (the
system prompt's git probe, the model connection, skills and hooks), which changes
nothing in the tree, instead of after it: a one-answer ``troupe run`` otherwise
waits on the two sets of processes one after the other. The event is the same and in the
same place (after ``user_input``, before the model is asked); a hook, which may
change the tree, makes the session drop the early one and take it again.

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
        self._early: _Early | None = None
        self.slow_notice_s = SLOW_NOTICE_S

    def start_early(self, nursery: trio.Nursery, config: SessionConfig) -> None:
        """Begin the coming input's snapshot now, in ``nursery``: that input's
        :meth:`take` waits for it rather than starting one. Only while nothing can
        change the tree before the input is recorded (no tool runs before it; the
        caller drops it with :meth:`drop_early` if a hook may have run)."""
        if not config.snapshots or self._given_up or self._early is not None:
            return
        early = _Early(config.snapshot_max_file_bytes)
        self._early = early
        nursery.start_soon(self._run_early, early)

    def drop_early(self) -> None:
        """Forget an early snapshot (its processes finish on their own; the next
        snapshot of this tree waits for them, as the script takes turns)."""
        self._early = None

    async def _run_early(self, early: _Early) -> None:
        try:
            early.outcome = await self._snapshot(early.max_file_bytes)
        except Exception as error:  # the input's take reports it
            early.outcome = error
        finally:
            early.done.set()

    async def take(self, reason: SnapshotReason, input_seq: int, config: SessionConfig) -> None:
        """Snapshot now and record it; a failure is a warning, never an error."""
        if not config.snapshots or self._given_up:
            return
        early, self._early = self._early, None
        if reason != "input" or (early and early.max_file_bytes != config.snapshot_max_file_bytes):
            early = None
        try:
            snapshot = await self._take(config, early)
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

    async def _take(self, config: SessionConfig, early: _Early | None) -> WorkspaceSnapshot:
        """The snapshot (the early one's, when it ran to an outcome), with a notice
        (once a session) if the input waits long for it."""
        outcome: WorkspaceSnapshot | Exception | None = None
        async with trio.open_nursery() as nursery:
            if "slow" not in self._warned:
                nursery.start_soon(self._notice_when_slow)
            if early is not None:
                await early.done.wait()
                outcome = early.outcome
            if outcome is None:
                try:
                    outcome = await self._snapshot(config.snapshot_max_file_bytes)
                except Exception as error:  # raised here, not wrapped in the nursery's group
                    outcome = error
            nursery.cancel_scope.cancel()
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def _snapshot(self, max_file_bytes: int) -> WorkspaceSnapshot:
        return await take_snapshot(
            self.environment,
            root=self.root,
            shadow_base=self.shadow_base,
            max_file_bytes=max_file_bytes,
        )

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


class _Early:
    """An input's snapshot started ahead of it: its outcome once ``done`` (None if
    it was cancelled before it had one)."""

    def __init__(self, max_file_bytes: int) -> None:
        self.max_file_bytes = max_file_bytes
        self.done = trio.Event()
        self.outcome: WorkspaceSnapshot | Exception | None = None
