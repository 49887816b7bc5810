"""The embedded runtime of ``troupe run`` and the conversation: the server's stack in
the command's own process, spoken to by calls instead of over a loopback WebSocket.

The stack is the one :func:`actors.server.server.run_server` builds (store, runtime,
environments with the process ledger and the stored SSH hosts, models, the registry
and its recovery, restart reports), without the listener, the token and the web
page: nobody else was ever told the embedded server's port. :class:`LocalClient`
answers the requests the commands send as the gateway does (the same
:func:`~actors.server.dispatch.answer`, the same subscriptions), so the command
behaves the same whether its session runs here or on a server, and a start skips
the WebSocket handshake, the frame codecs and the HTTP machinery.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import trio

from actors.kernel import Runtime
from actors.server.dispatch import Services, answer, error_reply
from actors.server.environments import Environments
from actors.server.fence import own_paths
from actors.server.leftovers import end_leftover_groups, process_ledger
from actors.server.models import Models, ModelSettings
from actors.server.registry import SessionRegistry
from actors.server.restarts import report_restarts
from actors.server.subscription import SessionSubscription, subscription_key
from actors.store import open_store
from actors.telemetry import TelemetrySettings, open_telemetry
from protocol.asks import Asks
from protocol.client_errors import RequestError
from protocol.wire import (
    ErrorReply,
    Event,
    Ok,
    Request,
    Subscribed,
    SubscribeSession,
    UnsubscribeSession,
)

R = TypeVar("R")
EVENT_BUFFER = 65_536
"""Events read ahead of the command (as many as the WebSocket client queues); a
subscription waits beyond that."""


class LocalClient:
    """What the commands use of :class:`protocol.client.TroupeClient` (``request``
    and ``events``), answered in this process."""

    def __init__(self, services: Services, nursery: trio.Nursery) -> None:
        self.services = services
        self._nursery = nursery
        self._ids = itertools.count(1)
        self._send, self._receive = trio.open_memory_channel[Event](EVENT_BUFFER)
        self._subscriptions: dict[str, trio.CancelScope] = {}

    async def request(self, kind: type[Asks[R]], /, **fields: Any) -> R:
        """The reply ``kind(id=..., **fields)`` declares, or :class:`RequestError`."""
        make = cast(Callable[..., Request], kind)
        request = make(id=next(self._ids), **fields)
        if isinstance(request, SubscribeSession):
            reply: Any = await self._subscribe(request)
        elif isinstance(request, UnsubscribeSession):
            await self.services.registry.load(request.session)
            scope = self._subscriptions.pop(self._key(request.session), None)
            if scope is not None:
                scope.cancel()
            reply = Ok(request.id)
        else:
            reply = await answer(self.services, request)
        if isinstance(reply, ErrorReply):
            raise RequestError(reply)
        return cast(R, reply)

    async def events(self) -> AsyncIterator[Event]:
        """Every event of every subscription, in arrival order."""
        async for event in self._receive:
            yield event

    def _key(self, session: str) -> str:
        return subscription_key(self.services.registry, session)

    async def _subscribe(self, request: SubscribeSession) -> Subscribed | ErrorReply:
        """Replace the session's subscription; its ``subscribed`` frame is the reply,
        the events after it go to :meth:`events`."""
        await self.services.registry.load(request.session)
        key = self._key(request.session)
        old = self._subscriptions.pop(key, None)
        if old is not None:
            old.cancel()
        replied: list[Subscribed] = []
        ready = trio.Event()

        async def send(frame: Any) -> None:
            if isinstance(frame, Subscribed):
                replied.append(frame)
                ready.set()
            elif isinstance(frame, Event):
                await self._send.send(frame)

        services = self.services
        subscription = SessionSubscription(
            services.registry, services.store, request.session, request.after_seq, send
        )
        try:
            await subscription.open()
        except Exception as error:
            return error_reply(request.id, error)
        scope = trio.CancelScope()
        self._subscriptions[key] = scope

        async def forward() -> None:
            with scope:
                try:
                    await subscription.run(request.id)
                finally:
                    ready.set()

        self._nursery.start_soon(forward)
        await ready.wait()
        if not replied:
            return ErrorReply(request.id, "internal", f"subscription to {request.session} ended")
        return replied[0]


@asynccontextmanager
async def open_local(
    data_dir: Path,
    working_dir: Path,
    models: ModelSettings,
    *,
    grace: float = 3.0,
    kill_grace: float = 2.0,
    replay_buffer_bytes: int = 2 << 20,
    telemetry: TelemetrySettings | None = None,
) -> AsyncIterator[LocalClient]:
    """The server's stack for the duration of the block (see the module doc); the
    defaults are :class:`~actors.server.server.ServerConfig`'s, whose module (the
    listener, the web page) this one does not import."""
    async with (
        open_telemetry(telemetry or TelemetrySettings()) as observer,  # flushed last
        open_store(data_dir) as store,
        Runtime(grace=grace, kill_grace=kill_grace) as runtime,
        trio.open_nursery() as nursery,
    ):
        ledger = process_ledger(data_dir)
        nursery.start_soon(end_leftover_groups, ledger)  # what a killed predecessor left
        environments = Environments(runtime, working_dir, store, ledger)
        registry = SessionRegistry(runtime, store, environments, Models(runtime, models), nursery)
        registry.replay_buffer_bytes = replay_buffer_bytes
        registry.fenced_paths = own_paths(data_dir)
        registry.local_shadow_base = str(data_dir / "shadow")
        if observer is not None:
            registry.observers.append(observer)
        await environments.local()
        await environments.restore()
        await registry.recover()
        report_restarts(runtime, registry, nursery)
        try:
            yield LocalClient(Services(registry, environments, store), nursery)
        finally:
            # As the server does: the runtime suspends its sessions on the way down
            # (no session_end), so what they emit is stored and they resume next time.
            nursery.cancel_scope.cancel()
