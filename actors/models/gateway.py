"""The model gateway actor: one per provider endpoint.

It owns the endpoint's pooled httpx client, its concurrency cap and its retry
policy. Admission goes through the actor's mailbox, so requests from every session
and subagent are admitted strictly in the order they asked; the HTTP exchange itself
runs in the caller's task (see :mod:`actors.models.session`), so a caller's
cancellation closes its own stream at once and a slow stream never blocks the
actor.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import msgspec
import trio

from actors.kernel import Actor, ActorRef, Runtime, handler
from actors.models.adapter import Adapter
from actors.models.config import Endpoint
from actors.models.registry import adapter_for
from actors.models.retry import RetryPolicy


class Ticket:
    """A caller's place in the admission queue; ``granted`` is set when it may go."""

    __slots__ = ("granted", "withdrawn")

    def __init__(self) -> None:
        self.granted = trio.Event()
        self.withdrawn = False


class Admit(msgspec.Struct, frozen=True):
    """Queue ``ticket``; sent with ``tell`` so that a cancelled caller cannot leak a slot."""

    ticket: Any


class Leave(msgspec.Struct, frozen=True):
    """Give the slot back (or leave the queue before being admitted)."""

    ticket: Any


class Retried(msgspec.Struct, frozen=True):
    """Counted for the statistics."""


class Connect(msgspec.Struct, frozen=True):
    """Ask for what a caller needs to talk to the endpoint (see ``ModelSession``)."""


class GetStats(msgspec.Struct, frozen=True):
    pass


class GatewayStats(msgspec.Struct, frozen=True):
    endpoint: str
    limit: int
    in_flight: int
    waiting: int
    max_in_flight: int
    admitted: int
    retries: int


class Connection(msgspec.Struct, frozen=True):
    """The shared parts a caller uses for its own HTTP exchange."""

    client: Any
    adapter: Any
    policy: RetryPolicy
    endpoint: Endpoint


class ModelGateway(Actor):
    mailbox_size = 1024

    def __init__(
        self,
        endpoint: Endpoint,
        policy: RetryPolicy | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.policy = policy or RetryPolicy()
        self.adapter: Adapter = adapter_for(endpoint)
        self._transport = transport
        self.client: httpx.AsyncClient | None = None
        self.in_flight = 0
        self.queue: deque[Ticket] = deque()
        self.max_in_flight = 0
        self.admitted = 0
        self.retries = 0

    async def on_start(self) -> None:
        t = self.endpoint.timeouts
        limit = self.endpoint.max_concurrency
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=t.connect, read=t.stream_read, write=t.request, pool=t.request
            ),
            limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
            transport=self._transport,
        )

    async def on_stop(self) -> None:
        if self.client is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(2):
                await self.client.aclose()

    @handler
    async def connect(self, message: Connect) -> Connection:
        return Connection(self.client, self.adapter, self.policy, self.endpoint)

    @handler
    async def admit(self, message: Admit) -> None:
        ticket: Ticket = message.ticket
        if self.in_flight < self.endpoint.max_concurrency and not self.queue:
            self._grant(ticket)
        else:
            self.queue.append(ticket)

    @handler
    async def leave(self, message: Leave) -> None:
        ticket: Ticket = message.ticket
        if not ticket.granted.is_set():
            ticket.withdrawn = True  # skipped when its turn comes
            return
        self.in_flight -= 1
        while self.queue and self.in_flight < self.endpoint.max_concurrency:
            waiting = self.queue.popleft()
            if not waiting.withdrawn:
                self._grant(waiting)

    @handler
    async def retried(self, message: Retried) -> None:
        self.retries += 1

    @handler
    async def stats(self, message: GetStats) -> GatewayStats:
        waiting = sum(1 for ticket in self.queue if not ticket.withdrawn)
        return GatewayStats(
            self.endpoint.name,
            self.endpoint.max_concurrency,
            self.in_flight,
            waiting,
            self.max_in_flight,
            self.admitted,
            self.retries,
        )

    def _grant(self, ticket: Ticket) -> None:
        self.in_flight += 1
        self.admitted += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        ticket.granted.set()


@asynccontextmanager
async def open_gateway(
    runtime: Runtime,
    endpoint: Endpoint,
    policy: RetryPolicy | None = None,
    *,
    name: str | None = None,
) -> AsyncIterator[ActorRef]:
    """Spawn a gateway for ``endpoint`` and stop it on exit."""
    ref = await runtime.spawn(ModelGateway(endpoint, policy), name=name)
    try:
        yield ref
    finally:
        with trio.CancelScope(shield=True):
            await runtime.stop(ref)
