"""The server's sessions in a trio program's own nursery, without a WebSocket.

    sessions = await nursery.start(run_sessions, HostConfig(data_dir=...))
    created = await sessions.request(CreateSession)
    async with await sessions.events(created.session.session_id) as events:
        async for event in events:
            ...
    sessions.stop()  # the shutdown ladder; or cancel the nursery (the ladder is shielded)

:meth:`Sessions.request` takes the WebSocket protocol's request types and returns its
reply frames, raising :class:`RequestError` with the server's codes, as
:class:`protocol.client.TroupeClient` does; the store, registry and sessions are the
server's own. This is the trio face; :class:`actors.embed.SessionHost` puts the same
thing on a thread of its own for asyncio hosts.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

import msgspec
import trio

from actors.kernel import Runtime
from actors.server.dispatch import Services, answer, error_reply
from actors.server.environments import Environments
from actors.server.fence import own_paths
from actors.server.models import Models, ModelSettings
from actors.server.registry import SessionRegistry
from actors.server.subscription import SessionSubscription
from actors.store import open_store
from actors.telemetry import TelemetrySettings, open_telemetry
from protocol.asks import Asks
from protocol.client import RequestError
from protocol.wire import ErrorReply, Event, Request

R = TypeVar("R")
EVENT_BUFFER = 1024
"""Events an event stream reads ahead of its reader; it waits beyond that."""


class HostConfig(msgspec.Struct, frozen=True):
    """Where the sessions keep their store and work, and which models they use."""

    data_dir: Path
    working_dir: Path = Path(".")
    models: ModelSettings = ModelSettings()
    grace: float = 3.0
    """Seconds each actor gets to stop before it is cancelled (then SIGKILL at 2 s)."""
    telemetry: TelemetrySettings = TelemetrySettings()
    """OpenTelemetry export of the sessions (off by default; docs/telemetry.md)."""


class Sessions:
    """The running stack: answer requests, stream events. Use :func:`run_sessions`."""

    def __init__(self, runtime: Runtime, services: Services, nursery: trio.Nursery) -> None:
        self.runtime = runtime
        self.services = services
        self._nursery = nursery
        self._ids = itertools.count(1)
        self._stop = trio.Event()

    async def request(self, kind: type[Asks[R]], /, **fields: Any) -> R:
        """Answer ``kind(id=..., **fields)`` as the server would, or raise
        :class:`RequestError` with the server's error code. Returns the reply the
        request declares (``SessionCreated`` for ``CreateSession``)."""
        make = cast(Callable[..., Request], kind)
        reply = await answer(self.services, make(id=next(self._ids), **fields))
        if isinstance(reply, ErrorReply):
            raise RequestError(reply)
        return cast(R, reply)

    async def subscribe(self, session: str, after_seq: int, emit: Any) -> None:
        """Hand the session's events after ``after_seq`` to ``emit`` (stored ones, then
        live ones, pending approvals sent again) until the session closes."""
        subscription = await self._open_subscription(session, after_seq, emit)
        await subscription.run(next(self._ids))

    async def events(self, session: str, *, after_seq: int = 0) -> EventStream:
        """An async iterator of the session's events (close it, or use ``async with``).

        An unknown session raises :class:`RequestError` here, before any event. The
        reading runs in the sessions' own nursery, so the caller opens none; closing
        the stream only unsubscribes (disconnecting is not cancelling)."""
        send, receive = trio.open_memory_channel[Event](EVENT_BUFFER)
        stream = EventStream(receive)
        subscription = await self._open_subscription(session, after_seq, send.send)

        async def pump() -> None:
            with stream.scope:
                async with send:
                    try:
                        await subscription.run(next(self._ids))
                    except Exception as error:  # the reader gets it, after what came before
                        stream.failure = error

        self._nursery.start_soon(pump)
        return stream

    async def _open_subscription(
        self, session: str, after_seq: int, emit: Any
    ) -> SessionSubscription:
        async def send(frame: Any) -> None:
            if isinstance(frame, Event):  # not the "subscribed" reply
                await emit(frame)

        services = self.services
        subscription = SessionSubscription(
            services.registry, services.store, session, after_seq, send
        )
        try:
            await subscription.open()
        except Exception as error:
            raise RequestError(error_reply(None, error)) from None
        return subscription

    def stop(self) -> None:
        """Run the shutdown ladder; :func:`run_sessions` returns once it is done."""
        self._stop.set()


class EventStream:
    """One subscription's events; ``aclose`` (or leaving ``async with``) unsubscribes."""

    def __init__(self, receive: trio.MemoryReceiveChannel[Event]) -> None:
        self._receive = receive
        self.scope = trio.CancelScope()
        self.failure: Exception | None = None

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        try:
            return await self._receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            if self.failure is not None:
                raise self.failure from None
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self.scope.cancel()
        await self._receive.aclose()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def open_sessions(config: HostConfig) -> AsyncIterator[Sessions]:
    """The server's stack without its listener, in the order the server builds it.
    Leaving the block runs the ladder (shielded: a cancelled host still gets it)."""
    async with (
        open_telemetry(config.telemetry) as telemetry,
        open_store(config.data_dir) as store,
        Runtime(grace=config.grace) as runtime,
        trio.open_nursery() as nursery,
    ):
        environments = Environments(runtime, config.working_dir)
        models = Models(runtime, config.models)
        registry = SessionRegistry(runtime, store, environments, models, nursery)
        registry.fenced_paths = own_paths(config.data_dir)
        registry.local_shadow_base = str(config.data_dir / "shadow")
        if telemetry is not None:
            registry.observers.append(telemetry)
        await environments.local()
        await registry.recover()
        try:
            yield Sessions(runtime, Services(registry, environments, store), nursery)
        finally:
            # As the server does: the runtime suspends its sessions on the way down
            # (no session_end), so what they emit is stored and they resume next time.
            nursery.cancel_scope.cancel()


async def run_sessions(
    config: HostConfig, *, task_status: trio.TaskStatus[Sessions] = trio.TASK_STATUS_IGNORED
) -> None:
    """Host the sessions in the caller's nursery until :meth:`Sessions.stop` (or
    cancellation), then run the shutdown ladder."""
    async with open_sessions(config) as sessions:
        task_status.started(sessions)
        await sessions._stop.wait()
