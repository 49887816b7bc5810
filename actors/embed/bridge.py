"""The crossing from asyncio into a trio run on a thread of its own.

A call from asyncio is handed to trio with ``TrioToken.run_sync_soon`` (thread-safe,
never blocks) and its outcome comes back into an asyncio future with
``loop.call_soon_threadsafe`` (see :mod:`actors.embed.crossing`). A tell or an ask
goes straight into the actor's mailbox; any other call runs as a trio task. Neither
loop ever waits on a lock and no thread sits blocked per call: both threads stay in
their own event loops. Cancelling the asyncio caller abandons the call on the trio
side (cancelling its task, or a concurrent handler's work), as it does inside trio;
trio's ``Cancelled`` never reaches asyncio and asyncio's ``CancelledError`` never
reaches trio. Errors cross as themselves; an ``ExceptionGroup`` of one is unwrapped
to its member.

This is the SSH bridge (``environments/ssh/bridge.py``) turned around: there a
trio actor owns an asyncio loop on a thread; here an asyncio host owns a trio run.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

import trio

from actors.embed.crossing import (
    Abandon,
    Call,
    Crossing,
    Offer,
    Outcome,
    deliver,
    settle,
    settle_outcome,
)
from actors.embed.errors import unwrap
from actors.embed.streams import Emit, Pump
from actors.kernel import ActorRef, AskTimeoutError, StoppingError
from actors.kernel.ref import Ask

T = TypeVar("T")
H = TypeVar("H")


class TrioThread(Generic[H]):
    """A trio run on its own thread, hosting what ``open_host`` opens, and the crossing
    into it. Open and close it on one asyncio loop; call it from any asyncio loop.

    ``open_host`` is called on the trio thread; leaving its context (the runtime's
    shutdown ladder) is what closing the thread does. While it closes, calls still
    in flight keep going; whatever is left afterwards fails with
    :class:`StoppingError`.
    """

    def __init__(self, open_host: Callable[[], AbstractAsyncContextManager[H]], name: str) -> None:
        self._open_host = open_host
        self._name = name
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        self._finished: asyncio.Future[None] | None = None
        self._host: H | None = None
        self._guard: asyncio.Task[None] | None = None
        self._stop_requested = False
        self._calls: Crossing | None = None
        self._returns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Crossing] = (
            weakref.WeakKeyDictionary()
        )
        """Per asyncio loop that has called: the crossing that brings outcomes back."""

    @property
    def host(self) -> H:
        """The hosted object; use it only from trio code on the runtime's thread."""
        if self._host is None:
            raise StoppingError("the embedded runtime is not running")
        return self._host

    @property
    def running(self) -> bool:
        return self._finished is not None and not self._finished.done()

    # -- opening and closing (on the host's asyncio loop) ---------------------

    async def start(self) -> H:
        """Start the thread and wait, without blocking the loop, until the host is open."""
        if self._thread is not None:
            raise RuntimeError("a TrioThread starts once")
        loop = asyncio.get_running_loop()
        started: asyncio.Future[H] = loop.create_future()
        self._finished = loop.create_future()
        self._thread = threading.Thread(
            target=self._serve, args=(loop, started), name=self._name, daemon=False
        )
        self._thread.start()
        self._guard = asyncio.create_task(self._stop_when_the_loop_ends(self._finished))
        try:
            return await asyncio.shield(started)
        except asyncio.CancelledError:
            await self.close()  # a host cancelled while starting still gets the ladder
            raise
        except Exception:  # the host could not open: its error, once the thread has ended
            with contextlib.suppress(Exception):
                await self.close()
            raise

    async def close(self) -> None:
        """Run the host's shutdown on its thread and wait for the thread to end.

        Not cancellable half-way: a cancelled caller still waits for the ladder (it is
        bounded by the runtime's own deadlines), then the cancellation goes on."""
        finished, thread = self._finished, self._thread
        if finished is None or thread is None:
            return
        self._request_stop()
        cancelled = False
        while not finished.done():
            try:
                await asyncio.wait([finished])  # never raises the outcome, never cancels it
            except asyncio.CancelledError:
                cancelled = True
        thread.join()  # it has finished trio.run: this returns at once
        if cancelled:
            raise asyncio.CancelledError
        error = finished.exception()
        if error is not None:
            raise error

    async def _stop_when_the_loop_ends(self, finished: asyncio.Future[None]) -> None:
        """A host that never left the block: ``asyncio.run`` cancels this task as it
        ends, and the runtime then runs its ladder (its thread keeps the process
        alive until the ladder is done)."""
        try:
            await asyncio.wait([finished])
        except asyncio.CancelledError:
            self._request_stop()
            raise

    def _request_stop(self) -> None:
        # The flag first, then the token: if the trio side has not published its
        # token yet, it will see the flag (see _main), so no request is lost.
        self._stop_requested = True
        token, stop = self._token, self._stop
        if token is not None and stop is not None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(stop.set)

    # -- the thread ----------------------------------------------------------

    def _serve(self, loop: asyncio.AbstractEventLoop, started: asyncio.Future[H]) -> None:
        outcome: BaseException | None = None
        try:
            trio.run(self._main, loop, started)
        except BaseException as error:
            outcome = unwrap(error)
        finally:
            self._host = None
            self._refuse_leftovers()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, started, None, outcome or StoppingError(
                    "the embedded runtime stopped while starting"))  # fmt: skip
                assert self._finished is not None
                loop.call_soon_threadsafe(settle, self._finished, None, outcome)

    def _refuse_leftovers(self) -> None:
        """After trio has ended: whatever was handed over but never drained fails."""
        if self._calls is None:
            return
        stopped = StoppingError("the embedded runtime has stopped")
        while self._calls.items:
            item = self._calls.items.popleft()
            if isinstance(item, Outcome):
                item.post(None, stopped)

    async def _main(self, loop: asyncio.AbstractEventLoop, started: asyncio.Future[H]) -> None:
        self._stop = trio.Event()
        self._token = trio.lowlevel.current_trio_token()
        if self._stop_requested:  # asked to stop before the token was published
            self._stop.set()
        async with trio.open_nursery() as calls:
            self._nursery = calls
            self._calls = Crossing(self._token.run_sync_soon, functools.partial(deliver, calls))
            try:
                async with self._open_host() as host:
                    self._host = host
                    loop.call_soon_threadsafe(settle, started, host, None)
                    await self._stop.wait()
            finally:
                calls.cancel_scope.cancel()

    # -- crossing (from any asyncio loop) -------------------------------------

    def _returns_to(self, loop: asyncio.AbstractEventLoop) -> Crossing:
        """The crossing that brings outcomes back to ``loop`` (one per calling loop)."""
        returns = self._returns.get(loop)
        if returns is None:
            returns = self._returns[loop] = Crossing(loop.call_soon_threadsafe, settle_outcome)
        return returns

    def _send(self, item: Outcome | Abandon) -> None:
        calls = self._calls
        if calls is None or not self.running:
            raise StoppingError("the embedded runtime is not running")
        try:
            calls.put(item)
        except trio.RunFinishedError:
            raise StoppingError("the embedded runtime has stopped") from None

    def _abandon(self, target: Outcome) -> None:
        with contextlib.suppress(StoppingError):  # the runtime is gone, and the work with it
            self._send(Abandon(target))

    async def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Await ``fn(*args)`` on the trio thread; cancelling this cancels it there."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        call = Call(fn, args, future, self._returns_to(loop))
        self._send(call)
        try:
            return await future
        except asyncio.CancelledError:
            self._abandon(call)
            raise

    async def tell(self, ref: ActorRef, message: Any) -> None:
        """``ref.tell(message)`` from asyncio: returns once the message is queued."""
        loop = asyncio.get_running_loop()
        offer = Offer(ref, loop.create_future(), self._returns_to(loop))
        offer.item = message
        self._send(offer)
        try:
            await offer.future
        except asyncio.CancelledError:
            self._abandon(offer)
            raise

    async def ask(self, ref: ActorRef, message: Any, timeout: float | None) -> Any:
        """``ref.ask(message, timeout=timeout)`` from asyncio, with the same errors.

        One crossing each way and no trio task (see :class:`Offer`); the deadline
        is an asyncio timer, and missing it or cancelling the caller abandons the
        ask on the trio side (cancelling a concurrent handler's work)."""
        loop = asyncio.get_running_loop()
        offer = Offer(ref, loop.create_future(), self._returns_to(loop))
        offer.item = Ask(message, offer.replied)
        self._send(offer)
        timer = None
        if timeout is not None:
            timer = loop.call_later(timeout, self._expire, offer, message, timeout)
        try:
            return await offer.future
        except asyncio.CancelledError:
            self._abandon(offer)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _expire(self, offer: Offer, message: Any, timeout: float) -> None:
        """On the asyncio loop: the ask's deadline passed before its reply came."""
        if offer.future.done():
            return
        error = AskTimeoutError(offer.ref.address, type(message).__name__, timeout)
        offer.future.set_exception(error)
        self._abandon(offer)

    async def stream(
        self, produce: Callable[[Emit], Awaitable[None]], *, buffer: int = 1024
    ) -> AsyncGenerator[Any]:
        """Iterate, from asyncio, what ``produce(emit)`` emits on the trio side.

        Items are read ahead into a bounded buffer (``buffer`` items: the producer
        waits beyond it) and cross in batches; leaving the loop early cancels the
        producer."""
        pump: Pump = await self.call(self._start_pump, produce, buffer)
        try:
            while batch := await self.call(pump.next_batch):
                for item in batch:
                    yield item
        finally:
            token = self._token
            if token is not None:
                with contextlib.suppress(trio.RunFinishedError):
                    token.run_sync_soon(pump.scope.cancel)

    async def _start_pump(self, produce: Callable[[Emit], Awaitable[None]], buffer: int) -> Pump:
        pump = Pump(produce, buffer)
        assert self._nursery is not None
        self._nursery.start_soon(pump.run)
        return pump
