"""OpenAI Chat Completions (``/v1/chat/completions``), complete and streamed.

This is also the adapter for every OpenAI-compatible server (Ollama, vLLM,
llama.cpp, Groq, OpenRouter...), through the endpoint's base URL. Their reasoning
arrives as ``reasoning_content`` or ``reasoning`` deltas; their in-stream errors as
a chunk with an ``error`` member; both are handled. Only choice 0 is read.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import msgspec

from actors.models.adapter import (
    Adapter,
    HttpCall,
    StreamParser,
    decode_json,
    encode,
    result_text,
    strict_schema,
)
from actors.models.builder import ResponseBuilder
from actors.models.config import Endpoint
from actors.models.errors import classify
from actors.models.media import (
    data_url,
    document_media,
    document_name,
    image_url,
    openai_input_audio,
    refuse,
)
from actors.models.sse import SSEEvent
from actors.models.wire_cache import FlatState, leading_system, raw
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

PROVIDER = "openai_chat"

REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def finish_reason(raw: str | None, has_tool_calls: bool) -> FinishReason:
    if raw is None:
        return FinishReason("tool_calls" if has_tool_calls else "other", None)
    reason = REASONS.get(raw, "other")
    if reason == "stop" and has_tool_calls:
        reason = "tool_calls"  # some local servers say "stop" after tool calls
    return FinishReason(reason, raw)  # type: ignore[arg-type]


def usage_from(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    inp = data.get("prompt_tokens") or 0
    out = data.get("completion_tokens") or 0
    return Usage(
        inp,
        out,
        data.get("total_tokens") or inp + out,
        (data.get("completion_tokens_details") or {}).get("reasoning_tokens"),
        (data.get("prompt_tokens_details") or {}).get("cached_tokens"),
        None,
    )


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    if all(type(part) is TextPart for part in message.content):
        return message.text
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if type(part) is TextPart:
            blocks.append({"type": "text", "text": part.text})
        elif type(part) is ImagePart:
            blocks.append(_image_block(part))
        elif type(part) is AudioPart:
            blocks.append(openai_input_audio(part, "openai_chat"))
        elif type(part) is DocumentPart:
            blocks.append({"type": "file", "file": _chat_file(part)})
    return blocks


def _image_block(part: ImagePart) -> dict[str, Any]:
    image: dict[str, Any] = {"url": image_url(part)}
    if part.detail:
        image["detail"] = part.detail
    return {"type": "image_url", "image_url": image}


def _chat_file(part: DocumentPart) -> dict[str, str]:
    if part.data is None:
        raise refuse("openai_chat", "a document by URL (give the bytes)")
    return {"filename": document_name(part), "file_data": data_url(document_media(part), part.data)}


def message_entries(message: Message, echo_reasoning: bool = True) -> list[dict[str, Any]]:
    # ``echo_reasoning``: send this wire's own reasoning back as ``reasoning_content``
    # (DeepSeek, vLLM, llama.cpp read it; OpenAI itself refuses it).
    """One message's Chat entries (a tool message gives one entry per result)."""
    role = message.role
    if role in ("system", "developer"):
        return [{"role": role, "content": message.text}]
    if role == "user":
        return [{"role": "user", "content": _user_content(message)}]
    if role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        calls = [
            {
                "id": part.id,
                "type": "function",
                "function": {
                    "name": part.name,
                    "arguments": part.raw_arguments or encode(part.arguments).decode(),
                },
            }
            for part in message.content
            if type(part) is ToolCall
        ]
        if calls:
            entry["tool_calls"] = calls
        thinking = "".join(
            p.text for p in message.content if type(p) is ThinkingPart and p.provider == PROVIDER
        )
        if thinking and echo_reasoning:
            entry["reasoning_content"] = thinking
        return [entry]
    results = [part for part in message.content if type(part) is ToolResult]
    entries: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": part.tool_call_id, "content": result_text(part)}
        for part in results
    ]
    pictures = [(part, image) for part in results for image in part.images]
    if pictures:  # a tool message carries text only: the pictures follow as the user's
        ids = ", ".join(dict.fromkeys(part.tool_call_id for part, _ in pictures))
        lead = {"type": "text", "text": f"The image(s) the tool call(s) {ids} returned:"}
        images = [_image_block(image) for _, image in pictures]
        entries.append({"role": "user", "content": [lead, *images]})
    return entries


def chat_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return tools_together([entry for message in messages for entry in message_entries(message)])


def tools_together(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool entries of a round kept together: a user entry between two of
    them (the pictures a result returned) moves after the round's last one, since
    the API wants every call's tool message right after the assistant's."""
    out: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    in_tools = False
    for entry in entries:
        role = entry.get("role")
        if role == "tool":
            in_tools = True
            out.append(entry)
        elif in_tools and role == "user":
            held.append(entry)
        else:
            out.extend(held)
            held.clear()
            in_tools = False
            out.append(entry)
    out.extend(held)
    return out


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    if strict_schema(tool.parameters):
        function["strict"] = True
    return {"type": "function", "function": function}


def is_openai(endpoint: Endpoint) -> bool:
    """OpenAI's own API, or Azure's (not one of the many servers that speak its wire)."""
    host = urlsplit(endpoint.base_url).hostname or ""
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def new_call_id() -> str:
    """For a tool call that arrives without an id (some local servers send none)."""
    return f"call_{uuid.uuid4().hex[:24]}"


class ChatState(FlatState):
    """Chat's flat items, with the pictures of a round's tool results held back
    until the round's last tool message (see :func:`tools_together`); a request
    sends ``items`` then ``held``."""

    __slots__ = ("held",)

    def __init__(self, convert: Callable[[Message], list[dict[str, Any]]]) -> None:
        super().__init__(convert)
        self.held: list[msgspec.Raw] = []

    def add(self, message: Message) -> int:
        if message.role != "tool" and self.held:
            self.items += self.held
            self.held = []
        if message.role != "tool":
            return super().add(message)
        converted = self.convert(message)
        encoded = [raw(entry) for entry in converted if entry.get("role") == "tool"]
        pictures = [raw(entry) for entry in converted if entry.get("role") != "tool"]
        self.items += encoded
        self.held += pictures
        return sum(len(item) for item in (*encoded, *pictures))


class OpenAIChatAdapter(Adapter):
    provider = PROVIDER

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.openai = is_openai(endpoint)

    def _entries(self, message: Message) -> list[dict[str, Any]]:
        return message_entries(message, echo_reasoning=not self.openai)

    def _state(self) -> ChatState:
        return ChatState(self._entries)

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        lead = leading_system(request.messages)
        state = self.cache.state(request.messages[lead:], self._state)
        messages: list[Any] = [e for m in request.messages[:lead] for e in self._entries(m)]
        messages += state.items
        messages += state.held
        body: dict[str, Any] = {"model": request.model, "messages": messages}
        if request.tools:
            body["tools"] = self.tool_list(request.tools, _tool)
            choice = request.tool_choice
            if choice is not None:
                if choice.mode == "named":
                    body["tool_choice"] = {
                        "type": "function",
                        "function": {"name": choice.tool_name},
                    }
                else:
                    body["tool_choice"] = choice.mode
        if request.max_tokens is not None:
            # OpenAI replaced max_tokens (refused by its reasoning models); others read it.
            body["max_completion_tokens" if self.openai else "max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.stop_sequences:
            body["stop"] = request.stop_sequences
        if request.reasoning_effort:
            body["reasoning_effort"] = request.reasoning_effort
        fmt = request.response_format
        if fmt is not None and fmt.type == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": fmt.json_schema, "strict": fmt.strict},
            }
        elif fmt is not None and fmt.type == "json":
            body["response_format"] = {"type": "json_object"}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self.options(request))
        headers = {}
        if self.endpoint.api_key:
            headers["authorization"] = f"Bearer {self.endpoint.api_key}"
        url = f"{self.endpoint.base_url}/chat/completions"
        return HttpCall("POST", url, self.headers(headers), encode(body))

    def parse(self, body: bytes) -> Response:
        data = decode_json(body, "chat completion")
        if data.get("error") and not data.get("choices"):
            raise classify(PROVIDER, None, data)
        builder = ResponseBuilder(PROVIDER)
        builder.start(data.get("id", ""), data.get("model", ""))
        choices = data.get("choices") or [{}]
        message = choices[0].get("message") or {}
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if reasoning:
            builder.reasoning("reasoning", reasoning)
            builder.end("reasoning")
        if message.get("content"):
            builder.text("text", message["content"])
            builder.end("text")
        for index, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            builder.tool_call(
                f"tool{index}",
                call.get("id") or new_call_id(),
                function.get("name", ""),
                function.get("arguments", ""),
            )
        reason = finish_reason(choices[0].get("finish_reason"), builder.has_tool_calls())
        response = builder.finish(reason, usage_from(data.get("usage")))
        builder.drain()
        return response

    def stream_parser(self) -> StreamParser:
        return ChatStream(ResponseBuilder(PROVIDER))


class ChatStream(StreamParser):
    def __init__(self, builder: ResponseBuilder) -> None:
        super().__init__(builder)
        self.raw_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.saw_reason = False

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        b = self.builder
        if self.finished is not None:
            return []
        if event.data == b"[DONE]":
            self._finish()
            return b.drain()
        data = decode_json(event.data, "chat completion chunk")
        if data.get("error"):
            raise classify(PROVIDER, None, data)
        b.start(data.get("id", ""), data.get("model", ""))
        if data.get("usage"):
            self.usage = data["usage"]
        for choice in data.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                b.reasoning("reasoning", reasoning)
            content = delta.get("content")
            if content:
                b.end("reasoning")
                b.text("text", content)
            for call in delta.get("tool_calls") or ():
                key = f"tool{call.get('index', 0)}"
                function = call.get("function") or {}
                if not b.is_open(key):
                    b.end("reasoning")
                    b.end("text")
                    call_id = call.get("id") or new_call_id()
                    b.tool_start(key, call_id, function.get("name") or "")
                b.tool_args(key, function.get("arguments") or "")
            if choice.get("finish_reason"):
                self.raw_reason = choice["finish_reason"]
                self.saw_reason = True
        return b.drain()

    def _finish(self) -> None:
        if self.finished is None:
            b = self.builder
            b.end("reasoning")
            b.end("text")
            reason = finish_reason(self.raw_reason, b.has_tool_calls())
            self.finished = b.finish(reason, usage_from(self.usage))

    def close(self) -> list[StreamEvent]:
        # Some compatible servers end without [DONE]; a finish_reason is enough then.
        if self.finished is None and self.saw_reason:
            self._finish()
        return super().close()
