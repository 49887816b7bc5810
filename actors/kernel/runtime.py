"""The Runtime: root of the actor tree, its registry, and its shutdown ladder.

A trio program embeds Troupe by opening a Runtime, either as an async context
manager (``async with Runtime() as rt``) or in a nursery of its own
(``rt = await nursery.start(Runtime().run)``). The CLI and the server are just two
such hosts.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING

import trio

from actors.kernel.address import ROOT, child_address, normalize, validate_name
from actors.kernel.cell import Cell
from actors.kernel.errors import (
    AddressInUseError,
    DepthLimitError,
    SpawnError,
    StoppingError,
    UnknownAddressError,
)
from actors.kernel.processes import KILL_GRACE
from actors.kernel.restart import RestartPolicy
from actors.kernel.supervisor import run_cell, stop_subtrees
from protocol.supervision import ChildFailed, ChildRestarted, ChildStopped

if TYPE_CHECKING:
    from actors.kernel.actor import Actor
    from actors.kernel.ref import ActorRef

log = logging.getLogger("troupe.actors")

DEFAULT_MAX_DEPTH = 16
DEFAULT_GRACE = 5.0
_ROOT_EXIT_HISTORY = 256
_DEPARTED_KEPT = 4096
"""Addresses remembered for a successor (oldest forgotten first)."""


def _under_failed_service(cell: Cell) -> bool:
    """Whether an ancestor of ``cell`` with a restart policy has just failed."""
    ancestor = cell.parent
    while ancestor is not None:
        if ancestor.restart is not None and ancestor.failure is not None:
            return True
        ancestor = ancestor.parent
    return False


class Runtime:
    """Owns the top-level actors, resolves addresses, and shuts everything down.

    ``max_depth`` bounds how deep the tree may grow (top-level actors are depth 1);
    ``grace`` is how long each actor gets, once asked to stop, before it is
    cancelled; ``kill_grace`` how long an owned process group gets between SIGTERM
    and SIGKILL (2 s, the design's ladder; tests may use less).
    """

    def __init__(
        self,
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        grace: float = DEFAULT_GRACE,
        kill_grace: float = KILL_GRACE,
    ):
        if max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        if kill_grace < 0:
            raise ValueError("kill_grace cannot be negative")
        self.max_depth = max_depth
        self.grace = grace
        self.kill_grace = kill_grace
        self._registry: dict[str, Cell] = {}
        self._roots: dict[str, Cell] = {}
        self._root_counter = 0
        self._nursery: trio.Nursery | None = None
        self._closing = False
        self._stopped = trio.Event()
        self._exit_stack: AsyncExitStack | None = None
        self.root_exits: deque[ChildFailed | ChildStopped] = deque(maxlen=_ROOT_EXIT_HISTORY)
        """How the most recent top-level actors ended (failures and normal stops)."""
        self.restarts: deque[ChildRestarted] = deque(maxlen=_ROOT_EXIT_HISTORY)
        """The most recent supervised restarts, at any depth."""
        self._restart_listeners: list[Callable[[ChildRestarted], None]] = []
        self._departed: dict[str, Cell] = {}

    # -- hosting -------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[Runtime] = trio.TASK_STATUS_IGNORED):
        """Host the runtime in the caller's nursery until :meth:`shutdown` completes."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started(self)
                await self._stopped.wait()
        finally:
            # However run() ends (a host may cancel it), its nursery has waited for
            # every actor: nothing is left to stop, and a later shutdown() must not
            # wait for a ladder that will never run.
            self._closing = True
            self._nursery = None
            self._stopped.set()

    async def __aenter__(self) -> Runtime:
        stack = AsyncExitStack()
        nursery = await stack.enter_async_context(trio.open_nursery())
        await nursery.start(self.run)
        self._exit_stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._exit_stack = self._exit_stack, None
        assert stack is not None, "Runtime.__aexit__ without __aenter__"
        try:
            # Shielded so that a host being cancelled still ends every process;
            # bounded so that shielding can never hang the host.
            with trio.CancelScope(shield=True) as scope:
                scope.deadline = trio.current_time() + self._shutdown_bound()
                await self.shutdown()
        finally:
            # The host's own exception is not fed to the nursery: it propagates as
            # itself, not wrapped in an ExceptionGroup of the runtime's making.
            await stack.aclose()

    def _shutdown_bound(self) -> float:
        return (self.grace + self.kill_grace) * (self.max_depth + 1) + 1.0

    # -- the tree ------------------------------------------------------------

    @property
    def closing(self) -> bool:
        return self._closing

    def ref(self, address: str) -> ActorRef:
        """Resolve an address to a ref; :class:`UnknownAddressError` if nobody is there."""
        cell = self._registry.get(normalize(address))
        if cell is None:
            raise UnknownAddressError(address)
        return cell.ref

    def addresses(self) -> list[str]:
        """Every live address, parents before children."""
        return sorted(self._registry)

    async def spawn(
        self,
        actor: Actor,
        *,
        name: str | None = None,
        depth_limit: int | None = None,
        mailbox_size: int | None = None,
        restart: RestartPolicy | None = None,
    ) -> ActorRef:
        """Start a top-level actor and return its ref once its ``on_start`` is done.

        ``restart`` (default: the actor class's ``restart_policy``) restarts it in
        place when it fails; see :mod:`actors.kernel.restart`."""
        return await self.spawn_child(
            None,
            actor,
            name=name,
            depth_limit=depth_limit,
            mailbox_size=mailbox_size,
            restart=restart,
        )

    async def spawn_child(
        self,
        parent: Cell | None,
        actor: Actor,
        *,
        name: str | None,
        depth_limit: int | None,
        mailbox_size: int | None,
        restart: RestartPolicy | None = None,
    ) -> ActorRef:
        """Create the cell, check the limits, and start it in its parent's nursery."""
        if self._closing or self._nursery is None:
            raise StoppingError("the runtime is shutting down" if self._closing else "not running")
        if parent is None:
            nursery, depth, limit, base = self._nursery, 1, self.max_depth, ROOT
        else:
            if parent.stop_requested or not parent.started:
                raise StoppingError(f"{parent.address} is stopping")
            nursery, depth, limit, base = (
                parent.nursery,
                parent.depth + 1,
                parent.depth_limit,
                parent.address,
            )
        if depth > limit:
            raise DepthLimitError(base or "/", depth, limit)
        if depth_limit is not None:
            if depth_limit < 0:
                raise ValueError("depth_limit cannot be negative")
            limit = min(limit, depth + depth_limit)
        if name is None:
            name = self._next_root_name() if parent is None else parent.next_child_name("a")
        address = child_address(base, validate_name(name))
        if address in self._registry:
            raise AddressInUseError(address)
        size = mailbox_size if mailbox_size is not None else actor.mailbox_size
        policy = restart if restart is not None else type(actor).restart_policy
        cell = Cell(self, actor, address, parent, depth, limit, size, policy)
        predecessor = self._departed.pop(address, None)
        if predecessor is not None:
            predecessor.successor = cell
        actor.ctx = cell
        self._registry[address] = cell
        (self._roots if parent is None else parent.children)[address] = cell
        ready = cell.ready
        assert ready is not None
        nursery.start_soon(run_cell, cell)
        await ready.wait()
        if cell.start_error is not None:
            raise SpawnError(address, cell.start_error) from cell.start_error
        if cell.finished:
            raise StoppingError(f"{address} was stopped while starting")
        return cell.ref

    def _next_root_name(self) -> str:
        self._root_counter += 1
        return f"a-{self._root_counter}"

    def forget(self, cell: Cell) -> None:
        """Remove a stopped cell from the registry and from its parent."""
        if self._registry.get(cell.address) is cell:
            del self._registry[cell.address]
            if not self._closing and _under_failed_service(cell):
                # Gone with an ancestor that failed and may be restarted: whoever
                # starts this address again (the restarted ancestor) succeeds it.
                self._departed[cell.address] = cell
                while len(self._departed) > _DEPARTED_KEPT:
                    del self._departed[next(iter(self._departed))]
        siblings = self._roots if cell.parent is None else cell.parent.children
        if siblings.get(cell.address) is cell:
            del siblings[cell.address]

    def record_root_exit(self, notice: ChildFailed | ChildStopped) -> None:
        self.root_exits.append(notice)

    def watch_restarts(self, listener: Callable[[ChildRestarted], None]) -> None:
        """Call ``listener`` (quick, must not raise) for every supervised restart,
        at any depth: how a host logs and reports them to its clients."""
        self._restart_listeners.append(listener)

    def record_restart(self, notice: ChildRestarted) -> None:
        self.restarts.append(notice)
        for listener in list(self._restart_listeners):
            try:
                listener(notice)
            except Exception:
                log.exception("a restart listener failed on %s", notice.address)

    # -- stopping ------------------------------------------------------------

    async def stop(self, ref: ActorRef, *, grace: float | None = None) -> None:
        """Stop one actor and its subtree through the ladder; no-op if already gone."""
        cell = self._registry.get(ref.address)
        if cell is None:
            return
        await stop_subtrees([cell], self.grace if grace is None else grace)

    async def shutdown(self, *, grace: float | None = None) -> None:
        """The ladder for the whole tree: refuse new actors; SIGTERM every owned
        process group (SIGKILL 2 s later); stop actors children first, each getting
        ``grace`` seconds before it is cancelled. Idempotent; concurrent callers all
        return when it is done."""
        if self._closing:
            await self._stopped.wait()
            return
        self._closing = True
        grace = self.grace if grace is None else grace
        try:
            await stop_subtrees(list(self._roots.values()), grace)
        finally:
            self._stopped.set()
