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
from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from actors.embed.bridge import TrioThread
from actors.embed.hosted import BridgedHost, resolve
from actors.embed.runtime import BridgedRef
from actors.embed.trio_sessions import HostConfig, Sessions, open_sessions
from protocol.asks import Asks
from protocol.wire import Event

R = TypeVar("R")
T = TypeVar("T")


class SessionHost(BridgedHost[Sessions]):
    """Sessions on a runtime thread, opened with ``async with`` on an asyncio loop.

    Every coroutine here may be awaited from any task of any asyncio loop."""

    def __init__(self, config: HostConfig, *, thread_name: str = "troupe-sessions") -> None:
        super().__init__(TrioThread(functools.partial(open_sessions, config), thread_name))
        self.config = config

    async def request(self, kind: type[Asks[R]], /, **fields: Any) -> R:
        """Answer ``kind(id=..., **fields)`` as the server would; raises
        :class:`protocol.client.RequestError` with the server's error code."""
        host = self._bridge.host

        async def ask() -> R:  # a closure, not functools.partial: it keeps the reply type
            return await host.request(kind, **fields)

        return await self._bridge.call(ask)

    def events(self, session: str, *, after_seq: int = 0) -> AsyncGenerator[Event]:
        """The session's events after ``after_seq``: the stored ones, then live ones,
        as a WebSocket subscriber gets them (pending approvals sent again, marked
        ``resent``). Ends when the session closes; leaving the loop early only
        unsubscribes. An unknown session raises :class:`protocol.client.RequestError`
        (``not_found``)."""
        subscribe = functools.partial(self._bridge.host.subscribe, session, after_seq)
        return self._bridge.stream(subscribe)

    async def ref(self, address: str) -> BridgedRef:
        """The actor at ``address`` (``/sessions/s-3f2a``), for the kernel's face."""
        runtime = self._bridge.host.runtime
        return BridgedRef(self._bridge, await self._bridge.call(resolve, runtime, address))

    @property
    def sessions(self) -> Sessions:
        """The trio face; only for trio code on the runtime's thread (see :meth:`call`)."""
        return self._bridge.host
