"""The model gateway actor: one per provider endpoint.

It owns the endpoint's pooled httpx client, its concurrency cap (an
:class:`Admission`: a fair ``trio.CapacityLimiter`` every caller waits on, so
requests from every session and subagent are admitted strictly in the order they
asked) and its retry policy. The HTTP exchange itself runs in the caller's task
(see :mod:`actors.models.session`), so a caller's cancellation closes its own
stream at once and a slow stream never blocks the actor.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager

import httpx
import msgspec
import trio

from actors.kernel import Actor, ActorRef, Runtime, handler
from actors.models.adapter import Adapter
from actors.models.config import Endpoint
from actors.models.registry import adapter_for
from actors.models.retry import RetryPolicy
from protocol.asks import Asks


class Admission:
    """The endpoint's concurrency cap, shared by every caller of one gateway.

    A ``trio.CapacityLimiter`` does the admitting: it is fair (waiters are admitted
    in the order they asked) and a cancelled waiter simply leaves its queue, so no
    slot can leak. Each slot is borrowed on behalf of its own token, so one task may
    hold several (a session streaming while its subagents ask in the same task is
    not refused). The counts are for :class:`GatewayStats`."""

    def __init__(self, limit: int) -> None:
        self.limiter = trio.CapacityLimiter(limit)
        self.admitted = 0
        self.max_in_flight = 0
        self.retries = 0

    @asynccontextmanager
    async def slot(self) -> AsyncGenerator[None]:
        """Hold one of the endpoint's slots for the duration of the block."""
        token = object()
        await self.limiter.acquire_on_behalf_of(token)
        try:
            self.admitted += 1
            self.max_in_flight = max(self.max_in_flight, self.limiter.borrowed_tokens)
            yield
        finally:
            self.limiter.release_on_behalf_of(token)


class Connect(msgspec.Struct, Asks["Connection"], frozen=True):
    """Ask for what a caller needs to talk to the endpoint (see ``ModelSession``)."""


class GetStats(msgspec.Struct, Asks["GatewayStats"], frozen=True):
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
    """The shared parts a caller uses for its own HTTP exchange: the pooled client,
    the wire adapter, the retry policy, and the admission every caller waits on."""

    client: httpx.AsyncClient
    adapter: Adapter
    policy: RetryPolicy
    endpoint: Endpoint
    admission: Admission


def _tls_for(base_url: str) -> ssl.SSLContext | bool:
    """The TLS settings of the endpoint's client. A plain-HTTP endpoint (a local
    server: Ollama, llama.cpp, the scripted provider) gets a context with no
    certificate authority loaded: loading the system's takes a twentieth of a
    second on every start, and the client never speaks TLS (its requests all go to
    ``base_url``; it follows no redirect). Were one ever made, it would fail
    verification, never pass unverified."""
    if base_url.lower().startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True


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
        self._making = trio.Lock()
        self.admission = Admission(endpoint.max_concurrency)

    def _make_client(self) -> httpx.AsyncClient:
        t = self.endpoint.timeouts
        limit = self.endpoint.max_concurrency
        return httpx.AsyncClient(
            timeout=httpx.Timeout(
                connect=t.connect, read=t.stream_read, write=t.request, pool=t.request
            ),
            limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
            transport=self._transport,
            verify=_tls_for(self.endpoint.base_url),
        )

    async def _client(self) -> httpx.AsyncClient:
        """The HTTP client, made on the first connection rather than at the start,
        and in a worker thread: its transport imports httpcore and h11 (a few
        hundredths of a second of CPU) and, for HTTPS, loads the certificate store.
        Made on the event loop, that CPU ran before a session's first processes (the
        git probe, the tree's snapshot) were even started, the loop being busy; from
        a thread, the loop starts them first and the client is made while they run.
        Nothing in the client is bound to the thread or the loop until it is used."""
        async with self._making:
            if self.client is None:
                self.client = await trio.to_thread.run_sync(self._make_client)
        return self.client

    async def on_stop(self) -> None:
        if self.client is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(2):
                await self.client.aclose()

    @handler
    async def connect(self, message: Connect) -> Connection:
        return Connection(
            await self._client(), self.adapter, self.policy, self.endpoint, self.admission
        )

    @handler
    async def stats(self, message: GetStats) -> GatewayStats:
        admission = self.admission
        limiter = admission.limiter
        return GatewayStats(
            self.endpoint.name,
            self.endpoint.max_concurrency,
            limiter.borrowed_tokens,
            limiter.statistics().tasks_waiting,
            admission.max_in_flight,
            admission.admitted,
            admission.retries,
        )


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
