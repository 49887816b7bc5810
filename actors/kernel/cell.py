"""Cell: the kernel's record of one live actor, handed to the actor as ``self.ctx``.

The cell holds what the supervisor needs (mailbox, cancel scope, children, owned
process groups, depth) and offers the actor its side of it: spawn children, stop
them, stop itself, and own OS processes so that shutdown can reach them. One object
does both jobs to keep an idle actor small.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncGenerator, Generator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import trio

from actors.kernel.actor import dispatch_table
from actors.kernel.errors import DeadActorError
from actors.kernel.processes import live_groups, terminate_groups
from actors.kernel.ref import ActorRef, Ask
from actors.kernel.restart import RestartBudget, RestartPolicy

if TYPE_CHECKING:
    from actors.kernel.actor import Actor, HandlerFunction
    from actors.kernel.runtime import Runtime

log = logging.getLogger("troupe.actors")

_REAP_BOUND = 2.0
"""Seconds to wait for a killed process to be reaped before giving up on it."""


class Cell:
    """One actor's mailbox, nursery, place in the tree, and the processes it owns.

    Kept lean on purpose (an idle actor costs a few kilobytes): the cancel scope is
    the nursery's own, the handler table is shared by the class, and the event a
    waiter needs is only created when somebody waits.
    """

    __slots__ = (
        "_cancel_pending",
        "_child_counter",
        "_done_event",
        "_nursery",
        "_process_groups",
        "actor",
        "address",
        "children",
        "concurrent",
        "depth",
        "depth_limit",
        "failure",
        "finished",
        "handlers",
        "inbox",
        "mailbox",
        "parent",
        "ready",
        "ref",
        "restart",
        "restarting",
        "runtime",
        "start_error",
        "stop_requested",
        "successor",
    )

    def __init__(
        self,
        runtime: Runtime,
        actor: Actor,
        address: str,
        parent: Cell | None,
        depth: int,
        depth_limit: int,
        mailbox_size: int,
        restart: RestartPolicy | None = None,
    ) -> None:
        self.runtime = runtime
        self.actor = actor
        self.address = address
        self.parent = parent
        self.depth = depth
        self.depth_limit = depth_limit
        table = dispatch_table(type(actor))
        self.handlers: dict[type, HandlerFunction] = table.functions
        self.concurrent: frozenset[type] = table.concurrent
        self.failure: Exception | None = None
        self.inbox, self.mailbox = trio.open_memory_channel[object](mailbox_size)
        self.children: dict[str, Cell] = {}
        self._nursery: trio.Nursery | None = None
        self.ready: trio.Event | None = trio.Event()
        self.start_error: Exception | None = None
        self.stop_requested = False
        self.finished = False
        self.ref = ActorRef(self)
        self._done_event: trio.Event | None = None
        self._cancel_pending = False
        self._child_counter: Iterator[int] | None = None
        self._process_groups: set[int] | None = None
        self.restart = RestartBudget(restart) if restart is not None else None
        """Set when the actor is restarted on failure (a one-for-one policy)."""
        self.restarting = False
        self.successor: Cell | None = None
        """The cell started at this address after this one ended without being
        stopped (its parent failed and restarted it): refs follow it."""

    # -- what the actor uses -------------------------------------------------

    @property
    def parent_ref(self) -> ActorRef | None:
        """The parent's ref, or None for a top-level actor (supervised by the runtime)."""
        return self.parent.ref if self.parent is not None else None

    @property
    def child_refs(self) -> Sequence[ActorRef]:
        """Refs of the children that are alive right now."""
        return [child.ref for child in self.children.values()]

    @property
    def process_groups(self) -> frozenset[int]:
        """Process groups this actor currently owns."""
        return frozenset(self._process_groups or ())

    async def spawn(
        self,
        actor: Actor,
        *,
        name: str | None = None,
        depth_limit: int | None = None,
        mailbox_size: int | None = None,
        restart: RestartPolicy | None = None,
    ) -> ActorRef:
        """Start ``actor`` as a child of this actor and return its ref once it is ready.

        ``depth_limit`` caps how many further levels may grow below the child; it can
        only tighten the limit inherited from this actor, never loosen it.
        ``restart`` restarts the child in place when it fails (one-for-one).
        """
        return await self.runtime.spawn_child(
            self,
            actor,
            name=name,
            depth_limit=depth_limit,
            mailbox_size=mailbox_size,
            restart=restart,
        )

    async def stop(self, ref: ActorRef, *, grace: float | None = None) -> None:
        """Stop a child (and its subtree) through the shutdown ladder."""
        await self.runtime.stop(ref, grace=grace)

    def stop_self(self) -> None:
        """Stop taking messages: drain what is queued, stop children, run ``on_stop``."""
        self.stop_requested = True
        self.inbox.close()

    @contextmanager
    def track_process_group(self, pgid: int) -> Generator[None]:
        """Register a process group this actor started, so shutdown can end it."""
        if self._process_groups is None:
            self._process_groups = set()
        self._process_groups.add(pgid)
        try:
            yield
        finally:
            self._process_groups.discard(pgid)

    @asynccontextmanager
    async def owned_process(
        self, command: str | Sequence[str], **options: Any
    ) -> AsyncGenerator[trio.Process]:
        """Start ``command`` as the leader of a new process group owned by this actor.

        Leaving the block ends whatever is left of the group (SIGTERM, the runtime's
        ``kill_grace``, SIGKILL),
        even when the leader already exited but a background child lingers, and even
        when the block is cancelled: no process outlives its owner.
        """
        process = await trio.lowlevel.open_process(command, start_new_session=True, **options)
        with self.track_process_group(process.pid):
            try:
                yield process
            finally:
                # Shielded so a cancelled owner still ends its processes; bounded so
                # a process that cannot be killed (D state) cannot hang the owner.
                with trio.CancelScope(shield=True) as scope:
                    kill_grace = self.runtime.kill_grace
                    scope.deadline = trio.current_time() + kill_grace + _REAP_BOUND
                    if live_groups({process.pid}):
                        await terminate_groups({process.pid}, kill_grace)
                    await process.wait()
                    for pipe in (process.stdin, process.stdout, process.stderr):
                        if pipe is not None:
                            await pipe.aclose()
                if scope.cancelled_caught:
                    log.error("%s: process group %d survived SIGKILL", self.address, process.pid)

    # -- what the supervisor uses --------------------------------------------

    def signal_ready(self) -> None:
        """``on_start`` is over (or never will be): wake the spawner."""
        if self.ready is not None:
            self.ready.set()
            self.ready = None

    async def wait_finished(self) -> None:
        if self.finished:
            return
        if self._done_event is None:
            self._done_event = trio.Event()
        await self._done_event.wait()

    def mark_finished(self) -> None:
        self.finished = True
        if self._done_event is not None:
            self._done_event.set()

    def record_failure(self, failure: Exception) -> None:
        """The actor failed: keep the first cause and stop it at once."""
        if self.failure is None:
            self.failure = failure
        self.cancel()

    def cancel(self) -> None:
        """Cancel the actor and everything below it, now."""
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()
        else:
            self._cancel_pending = True

    @property
    def started(self) -> bool:
        """True once the actor runs in its own nursery."""
        return self._nursery is not None

    @property
    def nursery(self) -> trio.Nursery:
        """The nursery the actor runs in (its tasks and children live there)."""
        if self._nursery is None:
            raise RuntimeError(f"{self.address} has not started yet")
        return self._nursery

    def open_nursery(self, nursery: trio.Nursery) -> None:
        """Adopt the nursery the actor runs in (and honour a cancel that came first)."""
        self._nursery = nursery
        if self._cancel_pending:
            nursery.cancel_scope.cancel()

    def prepare_restart(self) -> None:
        """Ready the cell for the actor's next incarnation at the same address.

        Refs stay valid: they hold this cell. Messages still queued are kept (a
        closed mailbox is reopened with them), so only the failed work is lost.
        """
        self.failure = None
        self.stop_requested = False
        self.restarting = False
        self._nursery = None
        self._cancel_pending = False
        if self.inbox.statistics().open_send_channels == 0:  # closed by the failure
            self._reopen_mailbox()

    def _reopen_mailbox(self) -> None:
        queued: list[Any] = []
        while True:
            try:
                queued.append(self.mailbox.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        size = max(self.mailbox.statistics().max_buffer_size, len(queued))
        self.mailbox.close()
        self.inbox, self.mailbox = trio.open_memory_channel[Any](size)
        for item in queued:
            self.inbox.send_nowait(item)

    def next_child_name(self, prefix: str) -> str:
        if self._child_counter is None:
            self._child_counter = itertools.count(1)
        return f"{prefix}-{next(self._child_counter)}"

    def subtree(self) -> Iterator[Cell]:
        """This cell and every descendant, parents before children."""
        yield self
        for child in list(self.children.values()):
            yield from child.subtree()

    def close_inbox(self) -> None:
        """Refuse new messages; the actor still receives what was already queued."""
        self.inbox.close()

    def release(self) -> int:
        """Close the mailbox for good, failing queued asks; return dropped tells."""
        self.inbox.close()
        dropped = 0
        while True:
            try:
                item = self.mailbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            if type(item) is Ask:
                item.fail(DeadActorError(self.address))
            else:
                dropped += 1
        self.mailbox.close()
        return dropped
