"""The actor runtime for asyncio hosts: trio on a thread of its own, asyncio-native refs.

    async with RuntimeThread() as troupe:          # on the host's asyncio loop
        counter = await troupe.spawn(Counter(), name="counters/c-1")
        await counter.tell(Add(40))
        print(await counter.ask(Total(), timeout=5))

Leaving the block runs the runtime's shutdown ladder on its thread (SIGTERM, 2 s,
SIGKILL for every process group the actors own) and waits for the thread to end,
without blocking the host's loop. Every method here is a coroutine of the caller's
asyncio loop and safe to call from any task of any asyncio loop; the trio objects
behind them (:attr:`RuntimeThread.runtime`, :attr:`BridgedRef.ref`) belong to the
runtime's thread and are only for trio code running there.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from actors.embed.bridge import TrioThread
from actors.embed.hosted import BridgedHost, resolve
from actors.embed.streams import iterate_into
from actors.kernel import DEFAULT_ASK_TIMEOUT, Actor, ActorRef, Runtime
from actors.kernel.runtime import DEFAULT_GRACE, DEFAULT_MAX_DEPTH
from protocol.events import SessionEvent
from protocol.session import Subscribe

T = TypeVar("T")


class BridgedRef:
    """An :class:`ActorRef` seen from asyncio: the same ``tell``/``ask`` contract
    (backpressure, deadline, typed errors, an abandoned ask cancels concurrent work)."""

    __slots__ = ("_bridge", "address", "ref")

    def __init__(self, bridge: TrioThread[Any], ref: ActorRef) -> None:
        self._bridge = bridge
        self.ref = ref
        """The trio ref; only for trio code on the runtime's thread."""
        self.address = ref.address

    def __repr__(self) -> str:
        return f"BridgedRef({self.address!r})"

    @property
    def alive(self) -> bool:
        """True until the actor has stopped (a snapshot: it may stop right after)."""
        return self.ref.alive

    async def tell(self, message: Any) -> None:
        """Deliver ``message``; waits (without blocking the loop) while the mailbox is full."""
        await self._bridge.tell(self.ref, message)

    async def ask(self, message: Any, *, timeout: float | None = DEFAULT_ASK_TIMEOUT) -> Any:
        """Deliver ``message`` and return the reply; raises what :meth:`ActorRef.ask`
        raises (``AskTimeoutError`` past ``timeout``, the handler's ``Rejection``...).
        Cancelling the caller cancels the work of a concurrent handler."""
        return await self._bridge.ask(self.ref, message, timeout)

    async def wait_stopped(self) -> None:
        await self._bridge.call(self.ref.wait_stopped)

    def subscribe(
        self, *, buffer: int = 1024, after_seq: int | None = None
    ) -> AsyncIterator[SessionEvent]:
        """A session actor's events as an asyncio async iterator, ending when the
        session closes. ``buffer`` bounds how far the reader may fall behind (it is
        then told ``events_missed``, as in trio); leaving the loop unsubscribes."""
        subscribe = Subscribe(buffer=buffer, after_seq=after_seq)
        open_subscription = functools.partial(self.ref.ask, subscribe, timeout=DEFAULT_ASK_TIMEOUT)
        return self._bridge.stream(iterate_into(open_subscription), buffer=buffer)


class RuntimeThread(BridgedHost[Runtime]):
    """Owns a :class:`Runtime` running on its own thread; open it with ``async with``
    on the host's asyncio loop. ``max_depth`` and ``grace`` are the Runtime's."""

    def __init__(
        self,
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        grace: float = DEFAULT_GRACE,
        thread_name: str = "troupe-runtime",
    ) -> None:
        super().__init__(TrioThread(lambda: Runtime(max_depth=max_depth, grace=grace), thread_name))

    @property
    def runtime(self) -> Runtime:
        """The trio Runtime; only for trio code on the runtime's thread."""
        return self._bridge.host

    async def spawn(
        self,
        actor: Actor,
        *,
        name: str | None = None,
        depth_limit: int | None = None,
        mailbox_size: int | None = None,
    ) -> BridgedRef:
        """Start a top-level actor; returns once its ``on_start`` is done."""
        spawn = functools.partial(
            self.runtime.spawn, actor, name=name, depth_limit=depth_limit, mailbox_size=mailbox_size
        )
        return BridgedRef(self._bridge, await self._bridge.call(spawn))

    async def ref(self, address: str) -> BridgedRef:
        """Resolve an address; ``UnknownAddressError`` if nobody is there."""
        return BridgedRef(self._bridge, await self.call(resolve, self.runtime, address))

    async def addresses(self) -> list[str]:
        return await self.call(_addresses, self.runtime)

    async def stop(self, ref: BridgedRef, *, grace: float | None = None) -> None:
        """Stop one actor and its subtree through the ladder."""
        await self.call(functools.partial(self.runtime.stop, ref.ref, grace=grace))

    def stream(
        self, open_iterable: Callable[..., Awaitable[AsyncIterable[T]]], *args: Any
    ) -> AsyncIterator[T]:
        """Iterate from asyncio what ``await open_iterable(*args)`` gives on the trio side."""
        return self._bridge.stream(iterate_into(open_iterable, *args))


async def _addresses(runtime: Runtime) -> list[str]:
    return runtime.addresses()
