"""The caller's side of a gateway: ``complete`` and ``stream`` with admission and retries.

A :class:`ModelSession` runs in the caller's task. Each attempt waits for admission
under the gateway's cap (in order), makes one HTTP exchange through the gateway's
pooled client, and gives the slot back; between attempts it sleeps the policy's
backoff without holding a slot. A stream is retried only until its first event;
after that a failure is its last event (:class:`StreamFailed`).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import trio

from actors.kernel import ActorRef
from actors.models.errors import ModelError, RequestTimeoutError
from actors.models.gateway import Connect, Connection, GatewayStats, GetStats
from actors.models.transport import EventStream, complete_once
from protocol.llm import Request, Response


class ModelSession:
    """Talk to one endpoint through its gateway. Get one with :meth:`connect`."""

    def __init__(self, gateway: ActorRef, connection: Connection) -> None:
        self.gateway = gateway
        self.connection = connection
        self._rng: random.Random | None = None

    @property
    def rng(self) -> random.Random:
        """Jitter for retries, made on first use: seeding one costs more than the
        rest of a session's start, and most sessions never retry."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    @classmethod
    async def connect(cls, gateway: ActorRef) -> ModelSession:
        return cls(gateway, await gateway.ask(Connect()))

    async def stats(self) -> GatewayStats:
        return await self.gateway.ask(GetStats())

    def slot(self) -> AbstractAsyncContextManager[None]:
        """Hold one of the endpoint's concurrent slots, admitted in order."""
        return self.connection.admission.slot()

    async def _backoff(self, attempt: int, error: ModelError) -> None:
        delay = self.connection.policy.delay(attempt, error, self.rng)
        if delay is None:
            raise error
        self.connection.admission.retries += 1
        await trio.sleep(delay)

    async def complete(self, request: Request) -> Response:
        """The whole answer; raises a typed :class:`ModelError` when retries run out."""
        conn = self.connection
        call = conn.adapter.build(request, stream=False)
        attempt = 0
        while True:
            try:
                async with self.slot():
                    with trio.fail_after(conn.endpoint.timeouts.request):
                        return await complete_once(conn.client, conn.adapter, call)
            except trio.TooSlowError:
                raise RequestTimeoutError(
                    f"{conn.adapter.provider}: no answer within {conn.endpoint.timeouts.request} s",
                    provider=conn.adapter.provider,
                ) from None
            except ModelError as error:
                await self._backoff(attempt, error)
                attempt += 1

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[EventStream]:
        """``async with session.stream(request) as events: async for event in events``.

        Leaving the block, whether by cancellation, an exception or ``break``, closes
        the HTTP response at once, which drops the connection under the server.
        """
        conn = self.connection
        call = conn.adapter.build(request, stream=True)
        attempt = 0
        while True:
            async with self.slot():
                events = EventStream(conn.client, conn.adapter, call)
                try:
                    with trio.fail_after(conn.endpoint.timeouts.request):
                        await events.open()
                except trio.TooSlowError:
                    await events.aclose()
                    raise RequestTimeoutError(
                        f"{conn.adapter.provider}: no first event within "
                        f"{conn.endpoint.timeouts.request} s",
                        provider=conn.adapter.provider,
                    ) from None
                except ModelError as error:
                    await events.aclose()
                    failure: ModelError | None = error
                except BaseException:
                    await events.aclose()
                    raise
                else:
                    failure = None
                    try:
                        yield events
                    finally:
                        await events.aclose()
                    return
            assert failure is not None
            await self._backoff(attempt, failure)
            attempt += 1
