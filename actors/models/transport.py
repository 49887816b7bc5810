"""One HTTP exchange with a provider: a whole answer, or an SSE stream as events.

Transport errors become typed errors here (a read timeout is a
:class:`RequestTimeoutError`, a refused or dropped connection a
:class:`NetworkError`), so retry decisions upstream only ever see the taxonomy.
Nothing here retries; :mod:`actors.models.session` does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httpx
import trio

from actors.models.adapter import Adapter, HttpCall, StreamParser
from actors.models.errors import (
    ConfigurationError,
    ModelError,
    NetworkError,
    RequestTimeoutError,
    classify,
)
from protocol.llm import Response, StreamEvent, StreamFailed

CLOSE_BOUND = 2.0
"""Seconds allowed for closing a response once the caller has gone."""


def transport_error(provider: str, error: Exception) -> ModelError:
    if isinstance(error, httpx.TimeoutException):
        what = "read" if isinstance(error, httpx.ReadTimeout) else type(error).__name__
        return RequestTimeoutError(f"{provider}: {what} timed out", provider=provider)
    return NetworkError(f"{provider}: {type(error).__name__}: {error}", provider=provider)


def _request(client: httpx.AsyncClient, call: HttpCall) -> httpx.Request:
    """The request, or a typed error when it cannot be built (a model name that
    cannot stand in the URL, a header with a newline): never retried."""
    try:
        return client.build_request(call.method, call.url, headers=call.headers, content=call.body)
    except (httpx.InvalidURL, ValueError, TypeError) as error:
        raise ConfigurationError(f"cannot build the request to {call.url!r}: {error}") from None


async def complete_once(client: httpx.AsyncClient, adapter: Adapter, call: HttpCall) -> Response:
    """POST and parse a whole answer; any failure is a typed :class:`ModelError`."""
    call = await adapter.prepare(call, client)
    try:
        response = await client.send(_request(client, call))
    except httpx.HTTPError as error:
        raise transport_error(adapter.provider, error) from error
    if response.status_code >= 400:
        raise classify(adapter.provider, response.status_code, response.content, response.headers)
    return adapter.parse(response.content)


class EventStream:
    """The events of one streamed answer, read as the caller iterates.

    :meth:`open` reads until the first unified event, so a failure before it can be
    retried with nothing delivered; after that a failure becomes a final
    :class:`StreamFailed` event. :meth:`aclose` drops the connection at once.
    """

    def __init__(self, client: httpx.AsyncClient, adapter: Adapter, call: HttpCall) -> None:
        self.client = client
        self.adapter = adapter
        self.call = call
        self.parser: StreamParser = adapter.stream_parser()
        self.sse = adapter.framer()
        self.buffer: deque[StreamEvent] = deque()
        self.response: httpx.Response | None = None
        self.chunks: AsyncIterator[bytes] | None = None
        self.done = False
        self.headers: Any = None

    async def open(self) -> None:
        """Connect, check the status, and read up to the first event (typed errors)."""
        provider = self.adapter.provider
        call = await self.adapter.prepare(self.call, self.client)
        try:
            self.response = await self.client.send(_request(self.client, call), stream=True)
        except httpx.HTTPError as error:
            raise transport_error(provider, error) from error
        response = self.response
        self.headers = response.headers
        if response.status_code >= 400:
            try:
                body = await response.aread()
            except httpx.HTTPError as error:
                raise transport_error(provider, error) from error
            raise classify(provider, response.status_code, body, response.headers)
        self.chunks = response.aiter_bytes()
        while not self.buffer and not self.done:
            await self._pull()

    async def _pull(self) -> None:
        assert self.chunks is not None
        try:
            chunk = await self.chunks.__anext__()
        except StopAsyncIteration:
            self.done = True
            for event in self.sse.close():
                self.buffer.extend(self.parser.feed(event))
            self.buffer.extend(self.parser.close())
            return
        except httpx.HTTPError as error:
            raise transport_error(self.adapter.provider, error) from error
        for event in self.sse.feed(chunk):
            self.buffer.extend(self.parser.feed(event))

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        await trio.lowlevel.checkpoint_if_cancelled()  # a cancelled caller stops here
        while not self.buffer:
            if self.done:
                raise StopAsyncIteration
            try:
                await self._pull()
            except ModelError as error:
                self.done = True
                return StreamFailed(error.info())
        return self.buffer.popleft()

    async def aclose(self) -> None:
        """Close the HTTP response; unfinished, its connection is dropped, not pooled."""
        self.done = True
        if self.response is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_BOUND):
                await self.response.aclose()
