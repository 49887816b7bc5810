"""What every provider adapter provides, and helpers they share.

An adapter is pure translation, with no I/O: :meth:`Adapter.build` turns a Request
into an HTTP call, :meth:`Adapter.parse` reads a whole answer, and a
:class:`StreamParser` turns SSE events into unified stream events. The transport
(``transport.py``) does the HTTP, so adapters are trivially testable and the
gateway owns every connection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from actors.models.builder import ResponseBuilder
from actors.models.config import Endpoint
from actors.models.errors import StreamError
from actors.models.provider_options import wire_options
from actors.models.sse import SSEEvent, SSEParser
from actors.models.wire_cache import ConversationCache, raw
from protocol.llm import (
    Message,
    Request,
    Response,
    StreamEvent,
    ToolCall,
    ToolDefinition,
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


def _same_tool(cached: ToolDefinition, tool: ToolDefinition) -> bool:
    return (
        cached.parameters is tool.parameters
        and cached.name == tool.name
        and cached.description == tool.description
    )


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
    """Base of the wire adapters; ``provider`` is the name used in errors and parts."""

    provider = "unknown"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.cache: ConversationCache[Any] = ConversationCache()
        """Conversations in this wire's JSON, each message encoded once."""
        self._tools: dict[int, tuple[ToolDefinition, msgspec.Raw]] = {}

    def tool_list(
        self, tools: list[ToolDefinition], convert: Callable[[ToolDefinition], Any]
    ) -> list[msgspec.Raw]:
        """The tool definitions in wire form; a tool's JSON is encoded once, for as long
        as its schema (the same dict object on every round) and text stay the same."""
        out = []
        for tool in tools:
            entry = self._tools.get(id(tool.parameters))
            if entry is None or not _same_tool(entry[0], tool):
                if len(self._tools) > 4096:
                    self._tools.clear()
                entry = (tool, raw(convert(tool)))
                self._tools[id(tool.parameters)] = entry
            out.append(entry[1])
        return out

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
        """This provider's options, then the wire-independent ones (a session's)."""
        return wire_options(request, self.provider)

    def headers(self, extra: dict[str, str]) -> dict[str, str]:
        headers = {"content-type": "application/json", **extra}
        headers.update(self.endpoint.headers)
        return headers


def strict_schema(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts a tool's JSON Schema as it is: every object
    closed (``additionalProperties: false``) with every property required, and none of
    the keywords strict mode refuses. Strict tools get their arguments guaranteed."""
    if isinstance(schema, list):
        return all(strict_schema(member) for member in schema)
    if not isinstance(schema, dict):
        return True
    if any(key in schema for key in _STRICT_REFUSES):
        return False
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or ()) != set(properties):
            return False
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict) and not all(
            strict_schema(member) for member in schema[key].values()
        ):
            return False
    return all(strict_schema(schema[key]) for key in ("items", "anyOf", "allOf") if key in schema)


_STRICT_REFUSES = ("oneOf", "not", "if", "then", "else", "patternProperties", "dependentRequired")
