"""What every provider adapter provides, and helpers they share.

An adapter is pure translation, with no I/O: :meth:`Adapter.build` turns a Request
into an HTTP call, :meth:`Adapter.parse` reads a whole answer, and a
:class:`StreamParser` turns SSE events into unified stream events. The transport
(``transport.py``) does the HTTP, so adapters are trivially testable and the
gateway owns every connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from actors.models.builder import ResponseBuilder
from actors.models.config import Endpoint
from actors.models.errors import StreamError
from actors.models.sse import SSEEvent, SSEParser
from protocol.llm import (
    Message,
    Request,
    Response,
    StreamEvent,
    ToolCall,
    ToolResult,
)

if TYPE_CHECKING:
    import httpx

_decoder = msgspec.json.Decoder()
encode = msgspec.json.Encoder().encode


class HttpCall(msgspec.Struct, frozen=True):
    method: str
    url: str
    headers: dict[str, str]
    body: bytes


def decode_json(data: bytes, what: str) -> Any:
    """JSON from the provider, or a :class:`StreamError` that shows what came instead."""
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as error:
        preview = data[:200].decode("utf-8", "replace")
        raise StreamError(f"invalid JSON in {what}: {error}: {preview!r}") from None


def result_text(result: ToolResult) -> str:
    """A tool result's content as text (structured content is sent as JSON)."""
    if isinstance(result.content, str):
        return result.content
    return encode(result.content).decode()


def tool_names(messages: list[Message]) -> dict[str, str]:
    """call id -> tool name, from the assistant turns (Gemini keys results by name)."""
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            for part in message.content:
                if type(part) is ToolCall:
                    names[part.id] = part.name
    return names


class StreamParser:
    """Turns one response's SSE events into unified events. Subclasses fill ``feed``."""

    def __init__(self, builder: ResponseBuilder) -> None:
        self.builder = builder
        self.finished: Response | None = None

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        raise NotImplementedError

    def close(self) -> list[StreamEvent]:
        """The body ended. A stream that never finished is a :class:`StreamError`."""
        if self.finished is None:
            raise StreamError(f"{self.builder.provider}: stream ended before it finished")
        return self.builder.drain()


class Adapter:
    """Base of the four adapters; ``provider`` is the name used in errors and parts."""

    provider = "unknown"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        raise NotImplementedError

    def parse(self, body: bytes) -> Response:
        raise NotImplementedError

    def stream_parser(self) -> StreamParser:
        raise NotImplementedError

    async def prepare(self, call: HttpCall, client: httpx.AsyncClient) -> HttpCall:
        """The call as sent, once per attempt: where a platform signs it (SigV4) or adds
        a bearer token it had to fetch (OAuth). Direct endpoints send it unchanged."""
        return call

    def framer(self) -> Any:
        """What cuts the response body into events: SSE, or a platform's own framing
        (AWS event-stream); anything with ``feed(bytes)`` and ``close()``."""
        return SSEParser()

    def options(self, request: Request) -> dict[str, Any]:
        return dict(request.provider_options.get(self.provider, {}))

    def headers(self, extra: dict[str, str]) -> dict[str, str]:
        headers = {"content-type": "application/json", **extra}
        headers.update(self.endpoint.headers)
        return headers
