"""The server's sessions inside an asyncio service, without a WebSocket in between.

    async with SessionHost(HostConfig(data_dir=...)) as host:
        session = (await host.request(CreateSession)).session.session_id
        await host.request(SubmitInput, session=session, text="Fix the test")
        async for event in host.events(session):
            ...

:meth:`SessionHost.request` takes the WebSocket protocol's request types and returns
its reply frames, raising :class:`RequestError` with the same error codes, so code
written against :class:`protocol.client.TroupeClient` moves between a remote
``troupe serve`` and an in-process host by swapping the object. The sessions, store
and registry are the server's own, running on the runtime's thread: events are durable
before they are delivered, a reader that leaves cancels nothing (abort is its own
request), and leaving the block runs the shutdown ladder.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import msgspec
import trio

from actors.embed.bridge import Emit, TrioThread
from actors.embed.runtime import BridgedRef
from actors.kernel import Runtime
from actors.server.dispatch import Services, answer, error_reply
from actors.server.environments import Environments
from actors.server.models import Models, ModelSettings
from actors.server.registry import SessionRegistry
from actors.server.subscription import SessionSubscription
from actors.store import open_store
from protocol.client import RequestError
from protocol.wire import ErrorReply, Event

R = TypeVar("R")


class HostConfig(msgspec.Struct, frozen=True):
    """Where the sessions keep their store and work, and which models they use."""

    data_dir: Path
    working_dir: Path = Path(".")
    models: ModelSettings = ModelSettings()
    grace: float = 3.0
    """Seconds each actor gets to stop before it is cancelled (then SIGKILL at 2 s)."""


@dataclass(frozen=True)
class _Hosted:
    """What lives on the runtime's thread."""

    runtime: Runtime
    services: Services


@asynccontextmanager
async def _open_sessions(config: HostConfig) -> AsyncIterator[_Hosted]:
    """The server's stack without its listener, in the order the server builds it."""
    async with (
        open_store(config.data_dir) as store,
        Runtime(grace=config.grace) as runtime,
        trio.open_nursery() as nursery,
    ):
        environments = Environments(runtime, config.working_dir)
        models = Models(runtime, config.models)
        registry = SessionRegistry(runtime, store, environments, models, nursery)
        await environments.local()
        await registry.recover()
        try:
            yield _Hosted(runtime, Services(registry, environments, store))
        finally:
            # As the server does: sessions stopped by the ladder resume next time.
            registry.freeze()
            nursery.cancel_scope.cancel()


class SessionHost:
    """Sessions on a runtime thread, opened with ``async with`` on an asyncio loop.

    Every coroutine here may be awaited from any task of any asyncio loop."""

    def __init__(self, config: HostConfig, *, thread_name: str = "troupe-sessions") -> None:
        self.config = config
        self._bridge: TrioThread[_Hosted] = TrioThread(
            functools.partial(_open_sessions, config), thread_name
        )
        self._ids = itertools.count(1)

    async def __aenter__(self) -> SessionHost:
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

    async def request(self, kind: type[R], /, **fields: Any) -> R:
        """Answer ``kind(id=..., **fields)`` as the server would; raises
        :class:`RequestError` with the server's error code."""
        request = kind(id=next(self._ids), **fields)  # type: ignore[call-arg]
        reply = await self._bridge.call(answer, self._bridge.host.services, request)
        if isinstance(reply, ErrorReply):
            raise RequestError(reply)
        return reply  # type: ignore[return-value]

    def events(self, session: str, *, after_seq: int = 0) -> AsyncIterator[Event]:
        """The session's events after ``after_seq``: the stored ones, then live ones,
        as a WebSocket subscriber gets them (pending approvals sent again, marked
        ``resent``). Ends when the session closes; leaving the loop early only
        unsubscribes. An unknown session raises :class:`RequestError` (``not_found``)."""
        hosted = self._bridge.host
        return self._bridge.stream(functools.partial(_subscribe, hosted, session, after_seq))

    async def ref(self, address: str) -> BridgedRef:
        """The actor at ``address`` (``/sessions/s-3f2a``), for the kernel's face."""
        runtime = self._bridge.host.runtime
        return BridgedRef(self._bridge, await self._bridge.call(_resolve, runtime, address))


async def _subscribe(hosted: _Hosted, session: str, after_seq: int, emit: Emit) -> None:
    """On the trio side: a connection's subscription whose frames go to ``emit``."""

    async def send(frame: Any) -> None:
        if isinstance(frame, Event):
            await emit(frame)

    services = hosted.services
    subscription = SessionSubscription(services.registry, services.store, session, after_seq, send)
    try:
        await subscription.open()
    except Exception as error:
        raise RequestError(error_reply(None, error)) from None
    await subscription.run(None)


async def _resolve(runtime: Runtime, address: str) -> Any:
    return runtime.ref(address)
