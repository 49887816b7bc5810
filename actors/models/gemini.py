"""Gemini (``generateContent`` and ``streamGenerateContent?alt=sse``).

Gemini gives function calls no ids, so each gets a synthetic ``call_<uuid>`` and a
tool result is mapped back to its function *name* through the conversation.
``thoughtSignature`` values are kept on the part they came with and echoed back on
the same part. Gemini has no "tool calls" finish reason: STOP with function calls
is reported as ``tool_calls``.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from actors.models.adapter import (
    Adapter,
    HttpCall,
    StreamParser,
    decode_json,
    encode,
    tool_names,
)
from actors.models.builder import ResponseBuilder
from actors.models.errors import StreamError, classify
from actors.models.gemini_args import PartialArgs
from actors.models.media import DEFAULT_DOCUMENT_TYPE, b64
from actors.models.sse import SSEEvent
from actors.models.wire_cache import GroupedState, leading_system
from protocol.llm import (
    AudioPart,
    DocumentPart,
    FinishReason,
    ImagePart,
    Message,
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

PROVIDER = "gemini"

REASONS = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
}


def finish_reason(raw: str | None, has_tool_calls: bool) -> FinishReason:
    if has_tool_calls and raw in (None, "STOP"):
        return FinishReason("tool_calls", raw)
    return FinishReason(REASONS.get(raw or "", "other"), raw)  # type: ignore[arg-type]


def usage_from(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    inp = data.get("promptTokenCount") or 0
    out = data.get("candidatesTokenCount") or 0
    return Usage(
        inp,
        out,
        data.get("totalTokenCount") or inp + out,
        data.get("thoughtsTokenCount"),
        data.get("cachedContentTokenCount"),
        None,
    )


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex}"


def _part(part: Any, names: dict[str, str]) -> dict[str, Any] | None:
    kind = type(part)
    out: dict[str, Any]
    if kind is TextPart:
        out = {"text": part.text}
    elif kind is ThinkingPart:
        if part.provider not in (None, PROVIDER):
            return {"text": part.text} if part.text else None
        out = {"text": part.text, "thought": True}
    elif kind is ToolCall:
        out = {"functionCall": {"name": part.name, "args": part.arguments}}
        if own_call_id(part.id):
            out["functionCall"]["id"] = part.id
    elif kind is ToolResult:
        content = part.content if isinstance(part.content, dict) else {"result": part.content}
        if part.is_error:
            content = {"error": part.content}
        name = part.name or names.get(part.tool_call_id, part.tool_call_id)
        response: dict[str, Any] = {"name": name, "response": content}
        if own_call_id(part.tool_call_id):
            response["id"] = part.tool_call_id
        return {"functionResponse": response}
    elif kind is ImagePart:
        media = part.media_type or "image/png"
        if part.data is not None:
            return {"inlineData": {"mimeType": media, "data": base64.b64encode(part.data).decode()}}
        return {"fileData": {"mimeType": media, "fileUri": part.url}}
    elif kind is AudioPart or kind is DocumentPart:
        media = part.media_type or ("audio/wav" if kind is AudioPart else DEFAULT_DOCUMENT_TYPE)
        if part.data is not None:
            return {"inlineData": {"mimeType": media, "data": b64(part.data)}}
        return {"fileData": {"mimeType": media, "fileUri": part.url}}
    else:
        return None
    signature = getattr(part, "signature", None)
    if signature and getattr(part, "provider", PROVIDER) in (None, PROVIDER):
        out["thoughtSignature"] = signature
    return out


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    # parametersJsonSchema takes JSON Schema as it is (type arrays, anyOf, $defs); the
    # older ``parameters`` takes only Gemini's OpenAPI subset.
    return {
        "name": tool.name,
        "description": tool.description,
        "parametersJsonSchema": tool.parameters,
    }


THINKING_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
"""Gemini 2.x thinks within a token budget; Gemini 3 takes a level instead."""


def _thinking(request: Request, budget: int | None) -> dict[str, Any]:
    """``thinkingLevel`` for Gemini 3 and later, ``thinkingBudget`` for 2.x models
    (or whenever ``provider_options.gemini.thinking_budget`` gives one)."""
    config: dict[str, Any] = {"includeThoughts": True}
    effort = request.reasoning_effort
    if budget is None and effort and "gemini-2" not in request.model:
        config["thinkingLevel"] = effort
    else:
        config["thinkingBudget"] = (
            budget if budget is not None else THINKING_BUDGETS[effort or "medium"]
        )
    return config


def own_call_id(call_id: str) -> bool:
    """Whether a call id came from the server (echoed back) or is one we made up."""
    made_up = len(call_id) == 37 and call_id.startswith("call_")
    return not (made_up and all(c in "0123456789abcdef" for c in call_id[5:]))


def contents(messages: list[Message]) -> list[dict[str, Any]]:
    names = tool_names(messages)
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role in ("system", "developer"):
            continue
        role = "model" if message.role == "assistant" else "user"
        parts = _message_parts(message, names)
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


def _message_parts(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    """A message's parts; the images tool results returned follow as inlineData
    parts after every functionResponse (a function response carries no picture
    before Gemini 3, so they go beside it, as other SDKs send them)."""
    parts = [p for part in message.content if (p := _part(part, names)) is not None]
    for part in message.content:
        if type(part) is ToolResult:
            parts.extend(p for image in part.images if (p := _part(image, names)) is not None)
    return parts


def _needs_names(message: Message) -> bool:
    return any(type(part) is ToolResult and not part.name for part in message.content)


class GeminiAdapter(Adapter):
    provider = PROVIDER
    _history: list[Message] = []
    """The request being built, while it is built: what names a nameless tool result."""

    def _convert(self, message: Message) -> tuple[str, list[dict[str, Any]]]:
        if message.role in ("system", "developer"):
            return "user", []
        names: dict[str, str] = {}
        if _needs_names(message):  # results without a name: named from their calls
            names = tool_names(self._history)
        role = "model" if message.role == "assistant" else "user"
        return role, _message_parts(message, names)

    def _contents(self, messages: list[Message]) -> list[dict[str, Any]]:
        lead = leading_system(messages)
        self._history = messages
        try:
            state = self.cache.state(messages[lead:], lambda: GroupedState(self._convert, "parts"))
        finally:
            self._history = []
        return state.snapshot()

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        body: dict[str, Any] = {"contents": self._contents(request.messages)}
        system = [{"text": m.text} for m in request.messages if m.role in ("system", "developer")]
        if system:
            body["systemInstruction"] = {"parts": system}
        if request.tools:
            body["tools"] = [{"functionDeclarations": self.tool_list(request.tools, _tool)}]
            choice = request.tool_choice
            if choice is not None:
                config: dict[str, Any] = {
                    "mode": {"auto": "AUTO", "none": "NONE"}.get(choice.mode, "ANY")
                }
                if choice.mode == "named":
                    config["allowedFunctionNames"] = [choice.tool_name]
                body["toolConfig"] = {"functionCallingConfig": config}
        generation: dict[str, Any] = {}
        if request.temperature is not None:
            generation["temperature"] = request.temperature
        if request.top_p is not None:
            generation["topP"] = request.top_p
        if request.max_tokens is not None:
            generation["maxOutputTokens"] = request.max_tokens
        if request.stop_sequences:
            generation["stopSequences"] = request.stop_sequences
        options = self.options(request)
        budget = options.pop("thinking_budget", None)
        if request.reasoning_effort or budget is not None:
            generation["thinkingConfig"] = _thinking(request, budget)
        fmt = request.response_format
        if fmt is not None and fmt.type != "text":
            generation["responseMimeType"] = "application/json"
            if fmt.json_schema is not None:
                generation["responseJsonSchema"] = fmt.json_schema
        if "generationConfig" in options:
            generation.update(options.pop("generationConfig"))
        if generation:
            body["generationConfig"] = generation
        body.update(options)
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        url = f"{self.endpoint.base_url}/models/{request.model}:{method}"
        headers = {"x-goog-api-key": self.endpoint.api_key} if self.endpoint.api_key else {}
        return HttpCall("POST", url, self.headers(headers), encode(body))

    def parse(self, body: bytes) -> Response:
        data = decode_json(body, "Gemini response")
        if isinstance(data, list):  # a streamed answer served as one JSON array
            parser = GeminiStream(ResponseBuilder(PROVIDER))
            for chunk in data:
                parser.chunk(chunk)
            parser.close()
            assert parser.finished is not None
            return parser.finished
        if data.get("error"):
            raise classify(PROVIDER, None, data)
        parser = GeminiStream(ResponseBuilder(PROVIDER))
        parser.chunk(data)
        parser.close()
        assert parser.finished is not None
        return parser.finished

    def stream_parser(self) -> StreamParser:
        return GeminiStream(ResponseBuilder(PROVIDER))


class GeminiStream(StreamParser):
    """Every chunk is a whole GenerateContentResponse; the last one carries the finish."""

    def __init__(self, builder: ResponseBuilder) -> None:
        super().__init__(builder)
        self.raw_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.calls = 0
        self.partial: PartialArgs | None = None

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        self.chunk(decode_json(event.data, "Gemini chunk"))
        return self.builder.drain()

    def chunk(self, data: dict[str, Any]) -> None:
        if data.get("error"):
            raise classify(PROVIDER, None, data)
        b = self.builder
        b.start(data.get("responseId", ""), data.get("modelVersion", ""))
        if data.get("usageMetadata"):
            self.usage = data["usageMetadata"]
        candidates = data.get("candidates") or ()
        if not candidates:
            block = (data.get("promptFeedback") or {}).get("blockReason")
            if block:
                self.raw_reason = block
            return
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or ():
            self._part(part)
        if candidate.get("finishReason"):
            self.raw_reason = candidate["finishReason"]

    def _part(self, part: dict[str, Any]) -> None:
        b = self.builder
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if call is not None:
            self._function_call(call, signature)
            return
        self._end_call()
        if "text" in part:
            if part.get("thought"):
                b.end("text")
                b.reasoning("thought", part["text"], signature=signature)
            else:
                b.end("thought")
                b.text("text", part["text"], signature)

    def _function_call(self, call: dict[str, Any], signature: str | None) -> None:
        b = self.builder
        if "partialArgs" in call or (not call.get("name") and self.partial is not None):
            if self.partial is not None:
                for piece in call.get("partialArgs") or ():
                    self.partial.add(piece)
                if not call.get("willContinue"):
                    self._end_call()
            return
        self._end_call()
        b.end("text")
        b.end("thought")
        self.calls += 1
        key = f"call{self.calls}"
        call_id = call.get("id") or new_call_id()
        meta = {"signature": signature} if signature else {}
        if call.get("willContinue"):
            b.tool_start(key, call_id, call.get("name", ""), **meta)
            self.partial = PartialArgs()
        else:
            b.tool_call(key, call_id, call.get("name", ""), call.get("args") or {}, **meta)

    def _end_call(self) -> None:
        if self.partial is not None:
            raw = encode(self.partial.root).decode()
            key = f"call{self.calls}"
            self.builder.tool_args(key, raw)
            self.builder.end(key)
            self.partial = None

    def close(self) -> list[StreamEvent]:
        """Gemini has no end-of-stream event: the body ending is the finish."""
        self._end_call()
        if self.finished is None:
            b = self.builder
            if not b.started:
                raise StreamError("gemini: the stream ended before its first chunk")
            reason = finish_reason(self.raw_reason, b.has_tool_calls())
            self.finished = b.finish(reason, usage_from(self.usage))
        return self.builder.drain()
