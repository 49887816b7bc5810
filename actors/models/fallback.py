"""An ordered list of endpoints for one session: when one fails, the next takes over.

Each route is a gateway (an endpoint, with its own retries) and optionally the model
to ask there. A call goes to the current route; when that route fails past its own
retries (a 5xx every time, the network gone, a 429 whose Retry-After is longer than
the policy waits), the same call goes on to the next route, and so do the calls after
it. The request is the unified one, so the next route's adapter converts the history
for its own wire (thinking from another provider goes as text, signatures only back
to the provider that made them). Errors the next endpoint would refuse just the same
(a malformed request, too long a context, a content filter) are not failed over.

A switch is reported through ``on_switch`` with a small dict (what the session turns
into its ``model_fallback`` event); streams fail over only before their first event,
since nothing has been shown of them then.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from actors.kernel import ActorRef
from actors.models.errors import (
    AbortError,
    ConfigurationError,
    ContentFilterError,
    ContextLengthError,
    InvalidRequestError,
    ModelError,
)
from actors.models.session import ModelSession
from actors.models.transport import EventStream
from protocol.llm import Request, Response

NOT_FAILED_OVER: tuple[type[ModelError], ...] = (
    InvalidRequestError,
    ContextLengthError,
    ContentFilterError,
    AbortError,
    ConfigurationError,
)
"""The request itself is at fault: another endpoint would refuse it too."""


class Route(msgspec.Struct, frozen=True):
    """One endpoint of a session's fallback list: its gateway and the model to ask
    there (None: the session's own model)."""

    gateway: Any
    model: str | None = None


def as_routes(gateway: ActorRef | Route | list[Route] | list[ActorRef]) -> list[Route]:
    """A session's model setting as routes: one gateway, or an ordered list."""
    if isinstance(gateway, list):
        return [g if isinstance(g, Route) else Route(g) for g in gateway]
    return [gateway if isinstance(gateway, Route) else Route(gateway)]


class FallbackModel:
    """The model of a session with fallbacks; used as a :class:`ModelSession` is."""

    def __init__(
        self,
        sessions: list[tuple[ModelSession, str | None]],
        on_switch: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        if not sessions:
            raise ConfigurationError("a fallback list needs at least one endpoint")
        self.sessions = sessions
        self.on_switch = on_switch
        self.index = 0

    @classmethod
    async def connect(
        cls, routes: list[Route], on_switch: Callable[[dict[str, Any]], None] | None = None
    ) -> FallbackModel:
        sessions = [(await ModelSession.connect(r.gateway), r.model) for r in routes]
        return cls(sessions, on_switch)

    @property
    def endpoint_name(self) -> str:
        return str(self.sessions[self.index][0].connection.endpoint.name)

    @property
    def route_model(self) -> str | None:
        """The model the current route asks for (None: the session's own)."""
        return self.sessions[self.index][1]

    def _request(self, request: Request) -> Request:
        model = self.sessions[self.index][1]
        return msgspec.structs.replace(request, model=model) if model else request

    def _switch(self, request: Request, error: ModelError) -> bool:
        """Move to the next route after ``error``; False: there is none to move to."""
        if isinstance(error, NOT_FAILED_OVER) or self.index + 1 >= len(self.sessions):
            return False
        before = self.sessions[self.index][0].connection.endpoint
        before_model = self._request(request).model
        self.index += 1
        after = self.sessions[self.index][0].connection.endpoint
        if self.on_switch is not None:
            self.on_switch(
                {
                    "from_endpoint": before.name,
                    "from_wire": before.wire,
                    "from_model": before_model,
                    "to_endpoint": after.name,
                    "to_wire": after.wire,
                    "to_model": self._request(request).model,
                    "reason": error.kind,
                    "message": error.message,
                }
            )
        return True

    async def complete(self, request: Request) -> Response:
        while True:
            session = self.sessions[self.index][0]
            try:
                return await session.complete(self._request(request))
            except ModelError as error:
                if not self._switch(request, error):
                    raise

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[EventStream]:
        while True:
            session = self.sessions[self.index][0]
            opening = session.stream(self._request(request))
            try:
                events = await opening.__aenter__()
            except ModelError as error:
                if not self._switch(request, error):
                    raise
                continue
            try:
                yield events
            except BaseException as exc:
                if not await opening.__aexit__(type(exc), exc, exc.__traceback__):
                    raise
            else:
                await opening.__aexit__(None, None, None)
            return
