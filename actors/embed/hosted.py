"""The face every asyncio host shares: ``async with`` around a :class:`TrioThread`.

:class:`actors.embed.RuntimeThread` and :class:`actors.embed.SessionHost` differ only
in what runs on the thread (a bare Runtime, or the server's sessions); opening,
closing and running trio code there are the same, and live here once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from actors.embed.bridge import TrioThread
from actors.kernel import ActorRef, Runtime

H = TypeVar("H")
T = TypeVar("T")


class BridgedHost(Generic[H]):
    """Opened with ``async with`` on the host's asyncio loop: entering starts the
    thread and waits until what it hosts is open; leaving runs its shutdown ladder
    there and waits for the thread to end, never blocking the loop."""

    def __init__(self, bridge: TrioThread[H]) -> None:
        self._bridge = bridge

    async def __aenter__(self) -> Self:
        await self._bridge.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._bridge.close()

    @property
    def running(self) -> bool:
        return self._bridge.running

    async def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run the trio coroutine function ``fn(*args)`` on the runtime's thread and
        return its result; cancelling the caller cancels it."""
        return await self._bridge.call(fn, *args)


async def resolve(runtime: Runtime, address: str) -> ActorRef:
    """The ref at ``address``, looked up on the runtime's thread."""
    return runtime.ref(address)
