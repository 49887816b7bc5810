"""The model layer's vocabulary: messages, tools, usage, responses and stream events.

Everything is a frozen msgspec Struct so that a conversation can cross actor
mailboxes, the wire and the store unchanged. Content parts and stream events are
tagged unions (``kind`` and ``type`` fields) so that one decoder handles them all.
Provider-specific opaque data that must round-trip verbatim (thinking signatures,
Gemini's ``thoughtSignature``, OpenAI's encrypted reasoning) rides on the parts.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Role = Literal["system", "user", "assistant", "tool", "developer"]
Reason = Literal["stop", "length", "tool_calls", "content_filter", "error", "other"]


class TextPart(msgspec.Struct, frozen=True, tag="text", tag_field="kind"):
    """Plain text; ``signature`` carries Gemini's thoughtSignature when one came with it."""

    text: str
    signature: str | None = None


class ImagePart(msgspec.Struct, frozen=True, tag="image", tag_field="kind"):
    """An image as a URL or as bytes (exactly one of the two)."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    detail: str | None = None


class AudioPart(msgspec.Struct, frozen=True, tag="audio", tag_field="kind"):
    """Audio input as a URL or as bytes, e.g. ``audio/wav`` or ``audio/mpeg``.

    Not every wire takes audio: an adapter that cannot send it refuses the request
    with a typed error rather than dropping the part silently."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None


class DocumentPart(msgspec.Struct, frozen=True, tag="document", tag_field="kind"):
    """A document (PDF, plain text) as a URL or as bytes; ``file_name`` is the name
    shown to the model where the wire takes one."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    file_name: str | None = None


class ToolCall(msgspec.Struct, frozen=True, tag="tool_call", tag_field="kind"):
    """A tool invocation by the model.

    ``raw_arguments`` is the argument text exactly as the provider sent it. When it is
    not a JSON object, ``arguments`` is empty and ``arguments_error`` says why, so a
    caller can report the problem to the model instead of crashing.
    """

    id: str
    name: str
    arguments: dict[str, Any] = {}
    raw_arguments: str = ""
    arguments_error: str | None = None
    signature: str | None = None
    type: str = "function"


class ToolResult(msgspec.Struct, frozen=True, tag="tool_result", tag_field="kind"):
    """The outcome of a tool call; ``name`` helps providers that key results by name.
    ``images`` are pictures the tool returned (``read_file`` of a PNG, an MCP tool's
    image content), sent after ``content`` in each wire's own way."""

    tool_call_id: str
    content: str | list[Any] | dict[str, Any]
    is_error: bool = False
    name: str | None = None
    images: list[ImagePart] = []


class ThinkingPart(msgspec.Struct, frozen=True, tag="thinking", tag_field="kind"):
    """Model reasoning. ``signature`` must be sent back byte for byte to the same provider.

    ``provider`` names who signed it, so an adapter can drop signatures that another
    provider would reject; ``id`` keeps OpenAI's reasoning item id.
    """

    text: str
    signature: str | None = None
    provider: str | None = None
    id: str | None = None


class RedactedThinkingPart(msgspec.Struct, frozen=True, tag="redacted_thinking", tag_field="kind"):
    """Opaque reasoning (Anthropic) that is unreadable but must round-trip verbatim."""

    data: str
    provider: str | None = None


Part = (
    TextPart | ImagePart | AudioPart | DocumentPart | ToolCall | ToolResult
    | ThinkingPart | RedactedThinkingPart
)  # fmt: skip


class Message(msgspec.Struct, frozen=True):
    """One turn of a conversation."""

    role: Role
    content: list[Part]
    name: str | None = None
    tool_call_id: str | None = None

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", [TextPart(text)])

    @classmethod
    def developer(cls, text: str) -> Message:
        return cls("developer", [TextPart(text)])

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [TextPart(text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", [TextPart(text)])

    @classmethod
    def tool_result(
        cls,
        tool_call_id: str,
        content: str | list[Any] | dict[str, Any],
        *,
        is_error: bool = False,
        name: str | None = None,
    ) -> Message:
        part = ToolResult(tool_call_id, content, is_error, name)
        return cls("tool", [part], tool_call_id=tool_call_id)

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.content if type(part) is TextPart)


class ToolDefinition(msgspec.Struct, frozen=True):
    """A tool offered to the model; ``parameters`` is a JSON Schema with an object root."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


class ToolChoice(msgspec.Struct, frozen=True):
    mode: Literal["auto", "none", "required", "named"] = "auto"
    tool_name: str | None = None


class ResponseFormat(msgspec.Struct, frozen=True):
    type: Literal["text", "json", "json_schema"] = "text"
    json_schema: dict[str, Any] | None = None
    strict: bool = False


class Request(msgspec.Struct, frozen=True):
    """One model call. ``provider_options`` is the non-portable escape hatch, keyed by
    provider name (``{"anthropic": {"thinking": {...}, "beta_headers": [...]}}``)."""

    model: str
    messages: list[Message]
    tools: list[ToolDefinition] = []
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop_sequences: list[str] = []
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    metadata: dict[str, str] | None = None
    provider_options: dict[str, dict[str, Any]] = {}
    provider: str | None = None
    """Which of a client's providers answers (``actors.models.client``); None: its default."""
    wire_options: dict[str, Any] = {}
    """Fields added to the body on whichever wire answers, over ``provider_options``
    (a session's ``provider_options``); Troupe's own fields are refused."""


def _add_optional(a: int | None, b: int | None) -> int | None:
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


class Usage(msgspec.Struct, frozen=True):
    """Token counts; ``a + b`` aggregates across steps (None stays None only if both are)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
            _add_optional(self.reasoning_tokens, other.reasoning_tokens),
            _add_optional(self.cache_read_tokens, other.cache_read_tokens),
            _add_optional(self.cache_write_tokens, other.cache_write_tokens),
        )


class FinishReason(msgspec.Struct, frozen=True):
    """The portable reason plus the provider's own word for it."""

    reason: Reason
    raw: str | None = None


class Response(msgspec.Struct, frozen=True):
    id: str
    model: str
    provider: str
    message: Message
    finish_reason: FinishReason
    usage: Usage = Usage()

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [part for part in self.message.content if type(part) is ToolCall]

    @property
    def reasoning(self) -> str | None:
        texts = [part.text for part in self.message.content if type(part) is ThinkingPart]
        return "".join(texts) if texts else None


class ErrorInfo(msgspec.Struct, frozen=True):
    """A model-layer error as data (the exception classes live in ``actors.models``).

    ``kind`` is one of: authentication, access_denied, not_found, invalid_request,
    rate_limit, server, content_filter, context_length, quota, network, stream,
    timeout, abort, configuration.
    """

    kind: str
    message: str
    provider: str | None = None
    status_code: int | None = None
    error_code: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    raw: Any = None


# -- stream events -------------------------------------------------------------


class StreamStart(msgspec.Struct, frozen=True, tag="stream_start", tag_field="type"):
    id: str = ""
    model: str = ""


class TextStart(msgspec.Struct, frozen=True, tag="text_start", tag_field="type"):
    text_id: str


class TextDelta(msgspec.Struct, frozen=True, tag="text_delta", tag_field="type"):
    text_id: str
    delta: str


class TextEnd(msgspec.Struct, frozen=True, tag="text_end", tag_field="type"):
    text_id: str
    text: str


class ReasoningStart(msgspec.Struct, frozen=True, tag="reasoning_start", tag_field="type"):
    reasoning_id: str


class ReasoningDelta(msgspec.Struct, frozen=True, tag="reasoning_delta", tag_field="type"):
    reasoning_id: str
    delta: str


class ReasoningEnd(msgspec.Struct, frozen=True, tag="reasoning_end", tag_field="type"):
    reasoning_id: str
    part: ThinkingPart | RedactedThinkingPart


class ToolCallStart(msgspec.Struct, frozen=True, tag="tool_call_start", tag_field="type"):
    call_id: str
    name: str


class ToolCallDelta(msgspec.Struct, frozen=True, tag="tool_call_delta", tag_field="type"):
    call_id: str
    delta: str


class ToolCallEnd(msgspec.Struct, frozen=True, tag="tool_call_end", tag_field="type"):
    call: ToolCall


class Finish(msgspec.Struct, frozen=True, tag="finish", tag_field="type"):
    """The last event of a good stream: the whole response, as ``complete`` would give."""

    response: Response

    @property
    def finish_reason(self) -> FinishReason:
        return self.response.finish_reason

    @property
    def usage(self) -> Usage:
        return self.response.usage


class StreamFailed(msgspec.Struct, frozen=True, tag="error", tag_field="type"):
    """The last event of a stream that broke after it had started (no retry is made)."""

    error: ErrorInfo


StreamEvent = (
    StreamStart
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | Finish
    | StreamFailed
)
