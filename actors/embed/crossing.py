"""What crosses between the asyncio loops and the trio thread, one item at a time.

A :class:`Crossing` carries items to a loop on another thread with one wake-up per
batch. Items going into trio are :class:`Call` (a coroutine function, run as a trio
task), :class:`Offer` (a tell or an ask put straight into a mailbox, no task) and
:class:`Abandon` (the asyncio caller gave up); outcomes come back as
``(future, value, error)`` tuples settled by :func:`settle_outcome`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from actors.embed.errors import unwrap
from actors.kernel import ActorRef, StoppingError
from actors.kernel.ref import Ask


def settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    """On the asyncio loop: complete the future unless its caller gave up."""
    if future.done():
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


def settle_outcome(outcome: tuple[asyncio.Future[Any], Any, BaseException | None]) -> None:
    settle(*outcome)


class Crossing:
    """Items handed from one thread to an event loop on another, one wake-up per batch.

    The sender asks the receiving loop to ``drain`` (``run_sync_soon`` into trio,
    ``call_soon_threadsafe`` into asyncio) only when no drain is pending, so many
    concurrent calls share a wake-up. Correct under the GIL: the sender appends
    before it reads the flag, the receiver clears the flag before it drains."""

    __slots__ = ("_handle", "_schedule", "_scheduled", "items")

    def __init__(
        self, schedule: Callable[[Callable[[], None]], Any], handle: Callable[[Any], None]
    ) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self._scheduled = False
        self._schedule = schedule
        self._handle = handle

    def put(self, item: Any) -> None:
        """On the sending thread; raises what ``schedule`` raises if the loop is gone
        (and then the item is not kept)."""
        self.items.append(item)
        if not self._scheduled:
            self._scheduled = True
            try:
                self._schedule(self._drain)
            except BaseException:
                self._scheduled = False
                with contextlib.suppress(ValueError):
                    self.items.remove(item)
                raise

    def _drain(self) -> None:
        """On the receiving loop; ``handle`` must not raise."""
        self._scheduled = False
        items, handle = self.items, self._handle
        while items:
            handle(items.popleft())


class Outcome:
    """What an item crossing into trio needs to bring its outcome back to asyncio."""

    __slots__ = ("future", "returns")

    def __init__(self, future: asyncio.Future[Any], returns: Crossing) -> None:
        self.future = future
        self.returns = returns

    def post(self, value: Any, error: BaseException | None) -> None:
        """On trio's thread; never raises."""
        with contextlib.suppress(RuntimeError):  # the asyncio loop is closed: nobody waits
            self.returns.put((self.future, value, error))

    def deliver(self, nursery: trio.Nursery) -> None:
        """On trio's thread, from the crossing's drain: start the work; never raises."""
        raise NotImplementedError

    def abandon(self) -> None:
        """On trio's thread: the asyncio caller gave up."""


class Call(Outcome):
    """An asyncio caller's coroutine function, run as a trio task of its own."""

    __slots__ = ("args", "cancelled", "fn", "scope")

    def __init__(
        self,
        fn: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        future: asyncio.Future[Any],
        returns: Crossing,
    ) -> None:
        super().__init__(future, returns)
        self.fn = fn
        self.args = args
        self.scope: trio.CancelScope | None = None
        self.cancelled = False

    def deliver(self, nursery: trio.Nursery) -> None:
        try:
            nursery.start_soon(self._run)
        except RuntimeError:  # the nursery has closed: the runtime is gone
            self.post(None, StoppingError("the embedded runtime has stopped"))

    def abandon(self) -> None:
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()

    async def _run(self) -> None:
        settled = False
        try:
            with trio.CancelScope() as scope:
                self.scope = scope
                if self.cancelled:
                    scope.cancel()
                value = await self.fn(*self.args)
                self.post(value, None)
                settled = True
        except Exception as error:
            self.post(None, unwrap(error))
            settled = True
        finally:
            if not settled:  # cancelled from outside (the runtime is stopping)
                self.post(None, StoppingError("the embedded runtime stopped before answering"))


class Offer(Outcome):
    """A tell or an ask from asyncio, put straight into the actor's mailbox.

    No trio task runs for it while the mailbox has room: the drain callback queues
    it, and an ask's reply is posted back by :meth:`Ask.notify` from the actor's own
    handler. Only a full mailbox costs a task, which waits for space (backpressure)."""

    __slots__ = ("abandoned", "item", "ref", "scope")

    def __init__(self, ref: ActorRef, future: asyncio.Future[Any], returns: Crossing) -> None:
        super().__init__(future, returns)
        self.ref = ref
        self.item: Any = None
        self.scope: trio.CancelScope | None = None
        self.abandoned = False

    def replied(self, request: Ask) -> None:
        self.post(request.value, request.error)

    def deliver(self, nursery: trio.Nursery) -> None:
        try:
            queued = self.ref.offer(self.item)
        except Exception as error:  # UnhandledMessageError, DeadActorError
            self.post(None, error)
            return
        if not queued:
            try:
                nursery.start_soon(self._deliver_waiting)
            except RuntimeError:
                self.post(None, StoppingError("the embedded runtime has stopped"))
        elif not isinstance(self.item, Ask):
            self.post(None, None)  # a tell is done once it is queued

    def abandon(self) -> None:
        self.abandoned = True
        if isinstance(self.item, Ask):
            self.item.abandon()
        if self.scope is not None:
            self.scope.cancel()

    async def _deliver_waiting(self) -> None:
        settled = False
        try:
            with trio.CancelScope() as scope:
                self.scope = scope
                if self.abandoned:
                    return
                await self.ref.deliver(self.item)
                if not isinstance(self.item, Ask):
                    self.post(None, None)
                settled = True
        except Exception as error:
            self.post(None, error)
            settled = True
        finally:
            if not settled and not self.abandoned:  # the runtime is stopping
                self.post(None, StoppingError("the embedded runtime stopped before answering"))


class Abandon:
    """Crosses into trio after the item it abandons (the crossing is FIFO)."""

    __slots__ = ("target",)

    def __init__(self, target: Outcome) -> None:
        self.target = target

    def deliver(self, nursery: trio.Nursery) -> None:
        self.target.abandon()


def deliver(nursery: trio.Nursery, item: Outcome | Abandon) -> None:
    item.deliver(nursery)
