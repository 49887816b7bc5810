"""Anthropic Messages (``/v1/messages``), complete and streamed.

Thinking and redacted-thinking blocks are kept verbatim with their signatures and
sent back unchanged; tool arguments arrive as ``input_json_delta`` fragments; ``ping``
is ignored; an in-stream ``error`` event becomes a typed error. Prompt caching:
``cache_control`` breakpoints go on the system prompt, the last tool and the last
message unless ``provider_options.anthropic.auto_cache`` is false; ``cache_ttl``
("5m" or "1h") sets their lifetime. With thinking and tools, interleaved thinking is
asked for (``interleaved_thinking: false`` turns it off). A JSON-schema response
format becomes ``output_config.format`` (structured outputs).
"""

from __future__ import annotations

import base64
from typing import Any

from actors.models.adapter import (
    Adapter,
    HttpCall,
    StreamParser,
    decode_json,
    encode,
    result_text,
)
from actors.models.builder import ResponseBuilder
from actors.models.errors import classify
from actors.models.media import b64, document_media, refuse
from actors.models.sse import SSEEvent
from actors.models.wire_cache import GroupedState, leading_system
from protocol.llm import (
    AudioPart,
    DocumentPart,
    FinishReason,
    ImagePart,
    Message,
    RedactedThinkingPart,
    Request,
    Response,
    StreamEvent,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
)

PROVIDER = "anthropic"
VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
CACHE = {"type": "ephemeral"}
INTERLEAVED = "interleaved-thinking-2025-05-14"
PROMPT_CACHING = "prompt-caching-2024-07-31"
"""Sent whenever a request carries ``cache_control`` (unified-llm-spec §8.10): caching is
generally available now, but proxies and older API versions still key on it."""
MIN_THINKING_BUDGET = 1024
THINKING_BUDGETS = {"minimal": MIN_THINKING_BUDGET, "low": 2048, "medium": 8192, "high": 24576}
"""Extended-thinking budgets for the portable ``reasoning_effort`` (Anthropic has no
effort parameter); ``provider_options.anthropic.thinking`` overrides them."""

REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def finish_reason(raw: str | None) -> FinishReason:
    return FinishReason(REASONS.get(raw or "", "other"), raw)  # type: ignore[arg-type]


def usage_from(data: dict[str, Any], reasoning_chars: int = 0) -> Usage:
    inp = data.get("input_tokens") or 0
    out = data.get("output_tokens") or 0
    return Usage(
        inp,
        out,
        inp + out,
        # Anthropic gives no exact count: estimate from the thinking text (~4 chars/token).
        reasoning_chars // 4 if reasoning_chars else None,
        data.get("cache_read_input_tokens"),
        data.get("cache_creation_input_tokens"),
    )


def _image(part: ImagePart) -> dict[str, Any]:
    if part.data is not None:
        data = base64.b64encode(part.data).decode()
        media = part.media_type or "image/png"
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": part.url}}


def _document(part: DocumentPart) -> dict[str, Any]:
    """PDFs as base64 or URL; plain text as a text source (what the API takes)."""
    media = document_media(part)
    if part.data is None:
        source: dict[str, Any] = {"type": "url", "url": part.url}
    elif media == "text/plain":
        source = {"type": "text", "media_type": media, "data": part.data.decode(errors="replace")}
    else:
        source = {"type": "base64", "media_type": media, "data": b64(part.data)}
    block: dict[str, Any] = {"type": "document", "source": source}
    if part.file_name:
        block["title"] = part.file_name
    return block


def _block(part: Any) -> dict[str, Any] | None:
    kind = type(part)
    if kind is TextPart:
        return {"type": "text", "text": part.text} if part.text else None
    if kind is ThinkingPart:
        if part.provider not in (None, PROVIDER) or part.signature is None:
            return {"type": "text", "text": part.text} if part.text else None
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if kind is RedactedThinkingPart:
        if part.provider not in (None, PROVIDER):
            return None
        return {"type": "redacted_thinking", "data": part.data}
    if kind is ToolCall:
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
    if kind is ToolResult:
        content: str | list[dict[str, Any]] = result_text(part)
        if part.images:  # a text block (never an empty one), then the pictures
            text = [{"type": "text", "text": content}] if content else []
            content = [*text, *(_image(image) for image in part.images)]
        return {
            "type": "tool_result",
            "tool_use_id": part.tool_call_id,
            "content": content,
            "is_error": part.is_error,
        }
    if kind is ImagePart:
        return _image(part)
    if kind is DocumentPart:
        return _document(part)
    if kind is AudioPart:
        raise refuse(PROVIDER, "audio (Anthropic's models take no audio input)")
    return None


def _message_blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role in ("system", "developer"):
        return "user", []
    role = "assistant" if message.role == "assistant" else "user"
    return role, [block for part in message.content if (block := _block(part)) is not None]


def _state() -> GroupedState:
    return GroupedState(_message_blocks, "content")


def _messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Strict alternation: consecutive same-role turns are merged, tools become user."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role in ("system", "developer"):
            continue
        role, blocks = _message_blocks(message)
        _append(out, role, blocks)
    return out


def _append(out: list[dict[str, Any]], role: str, blocks: list[Any]) -> None:
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": list(blocks)})


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


class AnthropicAdapter(Adapter):
    provider = PROVIDER

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        options = self.options(request)
        auto_cache = options.pop("auto_cache", True)
        ttl = options.pop("cache_ttl", None)
        cache: dict[str, Any] = {**CACHE, "ttl": ttl} if ttl else dict(CACHE)
        betas: list[str] = list(options.pop("beta_headers", []))
        interleaved = options.pop("interleaved_thinking", True)
        lead = leading_system(request.messages)
        state = self.cache.state(request.messages[lead:], _state)
        breakpoint_block = None
        block = state.last_block
        if auto_cache and block and block.get("type") not in ("thinking", "redacted_thinking"):
            breakpoint_block = {**block, "cache_control": cache}
        messages = state.snapshot(breakpoint_block)
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages,
        }
        system: list[dict[str, Any]] = [
            {"type": "text", "text": m.text}
            for m in request.messages
            if m.role in ("system", "developer") and m.text
        ]
        if system:
            body["system"] = system
        choice = request.tool_choice
        if request.tools and not (choice and choice.mode == "none"):
            last_tool = _tool(request.tools[-1])
            if auto_cache:
                last_tool["cache_control"] = cache
            tools: list[Any] = [*self.tool_list(request.tools[:-1], _tool), last_tool]
            body["tools"] = tools
            if choice is not None:
                if choice.mode == "required":
                    body["tool_choice"] = {"type": "any"}
                elif choice.mode == "named":
                    body["tool_choice"] = {"type": "tool", "name": choice.tool_name}
                else:
                    body["tool_choice"] = {"type": "auto"}
        # No temperature or top_p: the Messages API (anthropic 2.x's params) has no
        # sampling settings any more; provider_options can still pass them to a proxy.
        if request.stop_sequences:
            body["stop_sequences"] = request.stop_sequences
        if request.metadata and "user_id" in request.metadata:
            body["metadata"] = {"user_id": request.metadata["user_id"]}
        if request.reasoning_effort and "thinking" not in options:
            self._thinking(body, request)
        fmt = request.response_format
        if fmt is not None and fmt.type == "json_schema" and fmt.json_schema is not None:
            body["output_config"] = {"format": {"type": "json_schema", "schema": fmt.json_schema}}
        if stream:
            body["stream"] = True
        if auto_cache and body.get("system"):
            body["system"][-1]["cache_control"] = cache
        body.update(options)
        thinking = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        cached = breakpoint_block is not None or body.get("system") or body.get("tools")
        if auto_cache and cached and PROMPT_CACHING not in betas:
            betas.append(PROMPT_CACHING)
        if interleaved and thinking and body.get("tools") and INTERLEAVED not in betas:
            betas.append(INTERLEAVED)  # think between tool calls, not only before the first
        headers = {"anthropic-version": VERSION}
        if self.endpoint.api_key:
            headers["x-api-key"] = self.endpoint.api_key
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        url = f"{self.endpoint.base_url}/messages"
        return HttpCall("POST", url, self.headers(headers), encode(body))

    @staticmethod
    def _thinking(body: dict[str, Any], request: Request) -> None:
        """Map the portable reasoning effort to an extended-thinking budget."""
        budget = THINKING_BUDGETS.get(request.reasoning_effort or "")
        if budget is None:
            return
        if request.max_tokens is None:
            body["max_tokens"] = budget + DEFAULT_MAX_TOKENS  # room to answer after thinking
        else:
            budget = min(budget, request.max_tokens - MIN_THINKING_BUDGET)
            if budget < MIN_THINKING_BUDGET:
                return  # too small a limit to think in; answer without thinking
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}

    def parse(self, body: bytes) -> Response:
        data = decode_json(body, "Anthropic response")
        if data.get("type") == "error":
            raise classify(PROVIDER, None, data)
        builder = ResponseBuilder(PROVIDER)
        builder.start(data.get("id", ""), data.get("model", ""))
        reasoning_chars = 0
        for index, block in enumerate(data.get("content") or ()):
            kind = block.get("type")
            key = str(index)
            if kind == "text":
                builder.text(key, block.get("text", ""))
            elif kind == "thinking":
                reasoning_chars += len(block.get("thinking", ""))
                builder.reasoning(key, block.get("thinking", ""), signature=block.get("signature"))
            elif kind == "redacted_thinking":
                builder.redacted(block.get("data", ""))
            elif kind == "tool_use":
                builder.tool_call(key, block["id"], block["name"], block.get("input") or {})
            builder.end(key)
        usage = usage_from(data.get("usage") or {}, reasoning_chars)
        response = builder.finish(finish_reason(data.get("stop_reason")), usage)
        builder.drain()
        return response

    def stream_parser(self) -> StreamParser:
        return AnthropicStream(ResponseBuilder(PROVIDER))


class AnthropicStream(StreamParser):
    def __init__(self, builder: ResponseBuilder) -> None:
        super().__init__(builder)
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.reasoning_chars = 0
        self.kinds: dict[int, str] = {}

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        if self.finished is not None:
            return []  # message_stop ends the answer; recordings may append more
        data = decode_json(event.data, f"Anthropic {event.event} event")
        kind = data.get("type") or event.event
        b = self.builder
        if kind == "content_block_delta":
            index = data.get("index", 0)
            delta = data.get("delta") or {}
            dtype = delta.get("type")
            block = self.kinds.get(index)
            if dtype == "text_delta" and block == "text":
                b.text(str(index), delta.get("text", ""))
            elif dtype == "input_json_delta" and block == "tool_use":
                b.tool_args(str(index), delta.get("partial_json", ""))
            elif dtype == "thinking_delta" and block == "thinking":
                text = delta.get("thinking", "")
                self.reasoning_chars += len(text)
                b.reasoning(str(index), text)
            elif dtype == "signature_delta" and block == "thinking":
                b.annotate(str(index), signature=delta.get("signature"))
        elif kind == "content_block_start":
            index = data.get("index", 0)
            block = data.get("content_block") or {}
            btype = block.get("type", "")
            self.kinds[index] = btype
            key = str(index)
            if btype == "text":
                b.text(key, block.get("text", ""))
            elif btype == "thinking":
                b.reasoning(key, block.get("thinking", ""), signature=block.get("signature"))
            elif btype == "redacted_thinking":
                b.redacted(block.get("data", ""))
            elif btype == "tool_use":
                b.tool_start(key, block.get("id", ""), block.get("name", ""))
                initial = block.get("input")
                if initial:  # some servers send the whole input up front
                    b.tool_args(key, encode(initial).decode())
        elif kind == "content_block_stop":
            b.end(str(data.get("index", 0)))
        elif kind == "message_start":
            message = data.get("message") or {}
            if b.has_content:  # message_start again mid-message: it began again
                b.restart()
                self.reasoning_chars = 0
            self.kinds.clear()
            b.start(message.get("id", ""), message.get("model", ""))
            self.usage = dict(message.get("usage") or {})
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            if delta.get("stop_reason"):
                self.stop_reason = delta["stop_reason"]
            for name, value in (data.get("usage") or {}).items():
                if value is not None:
                    self.usage[name] = value
        elif kind == "message_stop":
            usage = usage_from(self.usage, self.reasoning_chars)
            self.finished = b.finish(finish_reason(self.stop_reason), usage)
        elif kind == "error":
            raise classify(PROVIDER, None, data)
        # "ping" and unknown event types are ignored, as Anthropic's versioning asks.
        return b.drain()
