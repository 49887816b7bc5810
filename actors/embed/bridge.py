"""The crossing from asyncio into a trio run on a thread of its own.

A call from asyncio becomes a trio task: it is handed to trio with
``TrioToken.run_sync_soon`` (thread-safe, never blocks) and its outcome comes back
into an asyncio future with ``loop.call_soon_threadsafe``. Neither loop ever waits on
a lock and no thread sits blocked per call: both threads stay in their own event
loops. Cancelling the asyncio caller cancels the trio task's scope, so abandoning a
call abandons its work, as it does inside trio; trio's ``Cancelled`` never reaches
asyncio and asyncio's ``CancelledError`` never reaches trio. Errors cross as
themselves; an ``ExceptionGroup`` of one is unwrapped to its member.

This is the SSH bridge (``environments/ssh/bridge.py``) turned around: there a
trio actor owns an asyncio loop on a thread; here an asyncio host owns a trio run.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, TypeVar

import trio

from actors.embed.errors import unwrap
from actors.embed.streams import Emit, Pump
from actors.kernel import StoppingError

T = TypeVar("T")
H = TypeVar("H")


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    """On the asyncio loop: complete the future unless its caller gave up."""
    if future.done():
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


def _settle_outcome(outcome: tuple[asyncio.Future[Any], Any, BaseException | None]) -> None:
    _settle(*outcome)


class _Crossing:
    """Items handed from one thread to an event loop on another, one wake-up per batch.

    The sender asks the receiving loop to ``drain`` (``run_sync_soon`` into trio,
    ``call_soon_threadsafe`` into asyncio) only when no drain is pending, so many
    concurrent calls share a wake-up. Correct under the GIL: the sender appends
    before it reads the flag, the receiver clears the flag before it drains."""

    __slots__ = ("_handle", "_items", "_schedule", "_scheduled")

    def __init__(
        self, schedule: Callable[[Callable[[], None]], Any], handle: Callable[[Any], None]
    ) -> None:
        self._items: collections.deque[Any] = collections.deque()
        self._scheduled = False
        self._schedule = schedule
        self._handle = handle

    def put(self, item: Any) -> None:
        """On the sending thread; raises what ``schedule`` raises if the loop is gone."""
        self._items.append(item)
        if not self._scheduled:
            self._scheduled = True
            self._schedule(self._drain)

    def _drain(self) -> None:
        """On the receiving loop; ``handle`` must not raise."""
        self._scheduled = False
        items, handle = self._items, self._handle
        while items:
            handle(items.popleft())


class _Call:
    """One asyncio caller's request, running as a trio task."""

    __slots__ = ("args", "cancelled", "fn", "future", "returns", "scope")

    def __init__(
        self,
        fn: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        future: asyncio.Future[Any],
        returns: _Crossing,
    ) -> None:
        self.fn = fn
        self.args = args
        self.future = future
        self.returns = returns
        self.scope: trio.CancelScope | None = None
        self.cancelled = False

    def start(self, nursery: trio.Nursery) -> None:
        """On trio's thread, from ``run_sync_soon``: must not raise."""
        try:
            nursery.start_soon(self._run)
        except RuntimeError:  # the nursery has closed: the runtime is gone
            self._post(None, StoppingError("the embedded runtime has stopped"))

    def cancel(self) -> None:
        """On trio's thread: the asyncio caller gave up."""
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
                self._post(value, None)
                settled = True
        except Exception as error:
            self._post(None, unwrap(error))
            settled = True
        finally:
            if not settled:  # cancelled from outside (the runtime is stopping)
                self._post(None, StoppingError("the embedded runtime stopped before answering"))

    def _post(self, value: Any, error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the asyncio loop is closed: nobody waits
            self.returns.put((self.future, value, error))


def _start(nursery: trio.Nursery, call: _Call) -> None:
    call.start(nursery)


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
        self._calls: _Crossing | None = None
        self._returns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Crossing] = (
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
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(_settle, started, None, outcome or StoppingError(
                    "the embedded runtime stopped while starting"))  # fmt: skip
                assert self._finished is not None
                loop.call_soon_threadsafe(_settle, self._finished, None, outcome)

    async def _main(self, loop: asyncio.AbstractEventLoop, started: asyncio.Future[H]) -> None:
        self._stop = trio.Event()
        self._token = trio.lowlevel.current_trio_token()
        if self._stop_requested:  # asked to stop before the token was published
            self._stop.set()
        async with trio.open_nursery() as calls:
            self._nursery = calls
            self._calls = _Crossing(self._token.run_sync_soon, functools.partial(_start, calls))
            try:
                async with self._open_host() as host:
                    self._host = host
                    loop.call_soon_threadsafe(_settle, started, host, None)
                    await self._stop.wait()
            finally:
                calls.cancel_scope.cancel()

    # -- crossing (from any asyncio loop) -------------------------------------

    async def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Await ``fn(*args)`` on the trio thread; cancelling this cancels it there."""
        token, calls = self._token, self._calls
        if token is None or calls is None or not self.running:
            raise StoppingError("the embedded runtime is not running")
        loop = asyncio.get_running_loop()
        returns = self._returns.get(loop)
        if returns is None:
            returns = self._returns[loop] = _Crossing(loop.call_soon_threadsafe, _settle_outcome)
        future: asyncio.Future[T] = loop.create_future()
        call = _Call(fn, args, future, returns)
        try:
            calls.put(call)
        except trio.RunFinishedError:
            raise StoppingError("the embedded runtime has stopped") from None
        try:
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(call.cancel)
            raise

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
