"""ActorRef: the only handle through which anything outside an actor reaches it.

A ref carries the actor's address and its mailbox. ``tell`` waits while the mailbox
is full (backpressure, never silent loss); ``ask`` additionally waits for the reply
within a deadline. A ref to a stopped actor fails at once with
:class:`DeadActorError`: the mailbox is closed when the actor stops, which also wakes
any sender still blocked on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

import trio

from actors.kernel.errors import (
    AskTimeoutError,
    DeadActorError,
    UnhandledMessageError,
)
from protocol.asks import Asks

if TYPE_CHECKING:
    from actors.kernel.cell import Cell

R = TypeVar("R")

DEFAULT_ASK_TIMEOUT = 30.0


class Ask:
    """A request travelling through a mailbox together with the slot for its reply."""

    __slots__ = ("abandoned", "done", "error", "message", "notify", "scope", "value")

    def __init__(self, message: object, notify: Callable[[Ask], None] | None = None) -> None:
        self.message = message
        self.notify = notify
        """Called (on trio's thread, must not raise) once the reply is settled: how an
        asker that is not a trio task (the asyncio bridge) learns of it without a task
        of its own waiting on ``done``."""
        self.done = trio.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        self.scope: trio.CancelScope | None = None
        """Set while a concurrent handler works on this request, so it can be cancelled."""

    def abandon(self) -> None:
        """The asker stopped waiting: cancel the work if it runs concurrently."""
        self.abandoned = True
        if self.scope is not None:
            self.scope.cancel()

    def succeed(self, value: Any) -> None:
        self.value = value
        self.done.set()
        if self.notify is not None:
            self.notify(self)

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.done.set()
        if self.notify is not None:
            self.notify(self)


class ActorRef:
    """Address plus mailbox of one actor; cheap to copy around, safe to keep."""

    __slots__ = ("_cell", "address")

    def __init__(self, cell: Cell) -> None:
        self._cell = cell
        self.address = cell.address

    def __repr__(self) -> str:
        return f"ActorRef({self.address!r})"

    def _current(self) -> Cell:
        """The cell to reach: after a supervised restart of an ancestor brought a
        new incarnation to this address, the ref follows it."""
        cell = self._cell
        if cell.finished and cell.successor is not None:
            while cell.finished and cell.successor is not None:
                cell = cell.successor
            self._cell = cell
        return cell

    @property
    def alive(self) -> bool:
        """True until the actor has stopped (it may still be draining its mailbox)."""
        return not self._current().finished

    async def wait_stopped(self) -> None:
        """Return once the actor has stopped, for whatever reason."""
        await self._current().wait_finished()

    async def tell(self, message: Any) -> None:
        """Deliver ``message``; waits while the mailbox is full."""
        cell = self._current()
        if type(message) not in cell.handlers:
            raise UnhandledMessageError(self.address, type(message).__name__)
        try:
            await cell.inbox.send(message)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise DeadActorError(self.address) from None

    def offer(self, item: object) -> bool:
        """Queue a message, or an :class:`Ask` built by the caller, without waiting:
        ``False`` when the mailbox is full. For callers on trio's thread that are not
        a task (the asyncio bridge's callbacks); raises what ``tell`` raises."""
        cell = self._current()
        kind = type(item.message) if isinstance(item, Ask) else type(item)
        if kind not in cell.handlers:
            raise UnhandledMessageError(self.address, kind.__name__)
        try:
            cell.inbox.send_nowait(item)
        except trio.WouldBlock:
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise DeadActorError(self.address) from None
        return True

    async def deliver(self, item: object) -> None:
        """``offer`` that waits for mailbox space (backpressure) instead of refusing."""
        cell = self._current()
        try:
            await cell.inbox.send(item)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise DeadActorError(self.address) from None

    @overload
    async def ask(self, message: Asks[R], *, timeout: float | None = DEFAULT_ASK_TIMEOUT) -> R: ...

    @overload
    async def ask(self, message: object, *, timeout: float | None = DEFAULT_ASK_TIMEOUT) -> Any: ...

    async def ask(self, message: object, *, timeout: float | None = DEFAULT_ASK_TIMEOUT) -> Any:
        """Deliver ``message`` and return the handler's reply.

        A request that inherits ``Asks[R]`` (:mod:`protocol.asks`) declares its
        reply, so the type checker knows what ``ask`` returns; any other message
        gets ``Any``.

        ``timeout`` covers both waiting for mailbox space and waiting for the reply;
        ``None`` waits as long as it takes. Raises :class:`AskTimeoutError` past it,
        the handler's :class:`Rejection` as itself, :class:`ActorFailedError` if the
        handler failed otherwise, and :class:`DeadActorError` if the actor stopped
        before answering. Giving up (deadline or cancellation) cancels the work of a
        concurrent handler.
        """
        cell = self._current()
        if type(message) not in cell.handlers:
            raise UnhandledMessageError(self.address, type(message).__name__)
        request = Ask(message)
        try:
            with trio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
                try:
                    await cell.inbox.send(request)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    raise DeadActorError(self.address) from None
                await request.done.wait()
        finally:
            if not request.done.is_set():
                request.abandon()
        if scope.cancelled_caught:
            raise AskTimeoutError(self.address, type(message).__name__, timeout or 0.0)
        if request.error is not None:
            raise request.error
        return request.value
