"""Streams from trio to asyncio: a producer on the trio side, batches on the other.

The producer fills a bounded channel (backpressure: it waits when the reader is
behind); each crossing carries up to :data:`STREAM_BATCH` items that are already
there, so a busy stream does not cost a round trip per item.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any

import trio

from actors.embed.errors import unwrap

STREAM_BATCH = 256
"""Items one crossing may carry back to asyncio when a stream has a backlog."""


Emit = Callable[[Any], Awaitable[None]]
"""Hands one item to the asyncio reader; waits while the reader's buffer is full."""


class Pump:
    """Runs a producer on the trio side into a bounded channel that asyncio drains in
    batches; the producer's error reaches the reader after the items before it."""

    def __init__(self, produce: Callable[[Emit], Awaitable[None]], buffer: int) -> None:
        self.produce = produce
        self.send, self.receive = trio.open_memory_channel[Any](buffer)
        self.scope = trio.CancelScope()
        self.error: BaseException | None = None

    async def run(self) -> None:
        with self.scope:
            try:
                await self.produce(self.send.send)
            except Exception as error:  # handed to the reader, never to the bridge's nursery
                self.error = unwrap(error)
            finally:
                self.send.close()  # after the error is set: the reader checks it at the end

    async def next_batch(self) -> list[Any]:
        """The next items (waiting for at least one); empty once the stream has ended."""
        try:
            batch = [await self.receive.receive()]
        except trio.EndOfChannel:
            if self.error is not None:
                raise self.error from None
            return []
        with contextlib.suppress(trio.WouldBlock, trio.EndOfChannel):
            while len(batch) < STREAM_BATCH:
                batch.append(self.receive.receive_nowait())
        return batch


def iterate_into(
    open_iterable: Callable[..., Awaitable[AsyncIterable[Any]]], *args: Any
) -> Callable[[Emit], Awaitable[None]]:
    """A producer that sends every item of ``await open_iterable(*args)``, then closes it."""

    async def produce(emit: Emit) -> None:
        iterable = await open_iterable(*args)
        try:
            async for item in iterable:
                await emit(item)
        finally:
            await _close_iterable(iterable)

    return produce


async def _close_iterable(iterable: Any) -> None:
    aclose = getattr(iterable, "aclose", None)
    if aclose is not None:
        with trio.CancelScope(shield=True):
            await aclose()
    elif callable(getattr(iterable, "close", None)):
        iterable.close()  # a session Subscription: stop buffering for a reader that left
