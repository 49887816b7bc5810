"""AWS Bedrock's Converse wire (``/model/{id}/converse`` and ``/converse-stream``):
one request shape for every Bedrock model (Nova, Llama, Mistral, Claude, ...).

``system`` blocks, ``messages`` of content blocks (:mod:`.converse_request`),
``inferenceConfig`` (maxTokens, temperature, topP, stopSequences), ``toolConfig``
(``toolSpec`` with ``inputSchema.json``; ``toolChoice`` auto/any/tool) and
``outputConfig`` for a JSON-schema answer. Prompt caching is a ``cachePoint`` block
after the system prompt, the tools and the conversation, sent by default to the
models that cache (Claude, Nova; ``provider_options.bedrock_converse.auto_cache``
overrides).
Reasoning effort becomes Claude's thinking budget or Nova 2's ``reasoningConfig`` in
``additionalModelRequestFields``. ``provider_options.bedrock_converse`` is merged
last (keyed by the wire: InvokeModel's Anthropic options are under ``bedrock``).

This module is pure translation; :mod:`actors.models.endpoints.bedrock` adds SigV4 or
the Bedrock API key and the event-stream framing whose events ``ConverseStream`` reads.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from actors.models.adapter import Adapter, HttpCall, StreamParser, decode_json, encode
from actors.models.anthropic import DEFAULT_MAX_TOKENS, THINKING_BUDGETS
from actors.models.builder import ResponseBuilder
from actors.models.converse_request import PROVIDER, WIRE, message_blocks
from actors.models.errors import classify
from actors.models.provider_options import wire_options
from actors.models.sse import SSEEvent
from actors.models.wire_cache import GroupedState, leading_system
from protocol.llm import (
    FinishReason,
    Request,
    Response,
    StreamEvent,
    ToolCall,
    ToolDefinition,
    Usage,
)

CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}
REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}


def finish_reason(raw: str | None) -> FinishReason:
    return FinishReason(REASONS.get(raw or "", "other"), raw)  # type: ignore[arg-type]


def usage_from(data: dict[str, Any], reasoning_chars: int = 0) -> Usage:
    inp = data.get("inputTokens") or 0
    out = data.get("outputTokens") or 0
    return Usage(
        inp,
        out,
        data.get("totalTokens") or inp + out,
        # Converse counts no reasoning tokens apart: estimated as Anthropic's are.
        reasoning_chars // 4 if reasoning_chars else None,
        data.get("cacheReadInputTokens"),
        data.get("cacheWriteInputTokens"),
    )


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": tool.parameters}}
    if tool.description:
        spec["description"] = tool.description
    return {"toolSpec": spec}


def _state() -> GroupedState:
    return GroupedState(message_blocks, "content")


def caches(model: str) -> tuple[bool, bool]:
    """(caches prompts, caches tools): Claude both, Nova system and messages only."""
    claude = "anthropic." in model or "claude" in model
    return claude or "amazon.nova" in model, claude


class ConverseAdapter(Adapter):
    provider = PROVIDER

    def options(self, request: Request) -> dict[str, Any]:
        return wire_options(request, WIRE)

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        options = self.options(request)
        prompt_cache, tool_cache = caches(request.model)
        auto_cache = options.pop("auto_cache", prompt_cache)
        lead = leading_system(request.messages)
        messages = self.cache.state(request.messages[lead:], _state).snapshot()
        if auto_cache and messages:
            tail = messages[-1]
            messages[-1] = {**tail, "content": [*tail["content"], CACHE_POINT]}
        body: dict[str, Any] = {"messages": messages}
        system: list[dict[str, Any]] = [
            {"text": m.text}
            for m in request.messages
            if m.role in ("system", "developer") and m.text
        ]
        if system:
            body["system"] = [*system, CACHE_POINT] if auto_cache else system
        inference: dict[str, Any] = {}
        if request.max_tokens is not None:
            inference["maxTokens"] = request.max_tokens
        if request.temperature is not None:
            inference["temperature"] = request.temperature
        if request.top_p is not None:
            inference["topP"] = request.top_p
        if request.stop_sequences:
            inference["stopSequences"] = request.stop_sequences
        self._tool_config(body, request, auto_cache and tool_cache)
        if request.reasoning_effort:
            self._reasoning(body, inference, request)
        if inference:
            body["inferenceConfig"] = inference
        fmt = request.response_format
        if fmt is not None and fmt.type == "json_schema" and fmt.json_schema is not None:
            structure = {"jsonSchema": {"schema": encode(fmt.json_schema).decode()}}
            body["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": structure}}
        if request.metadata:
            body["requestMetadata"] = dict(request.metadata)
        body.update(options)
        action = "converse-stream" if stream else "converse"
        url = f"{self.endpoint.base_url}/model/{quote(request.model, safe='')}/{action}"
        accept = "application/vnd.amazon.eventstream" if stream else "application/json"
        return HttpCall("POST", url, self.headers({"accept": accept}), encode(body))

    def _tool_config(self, body: dict[str, Any], request: Request, cache: bool) -> None:
        """``toolConfig``; with tool choice "none" (which Converse lacks) the tools are
        still declared when the history holds tool calls, as Converse requires."""
        choice = request.tool_choice
        if not request.tools:
            return
        if choice is not None and choice.mode == "none":
            if not any(type(p) is ToolCall for m in request.messages for p in m.content):
                return
            choice = None
        tools: list[Any] = self.tool_list(request.tools, _tool)
        config: dict[str, Any] = {"tools": [*tools, CACHE_POINT] if cache else tools}
        if choice is not None:
            if choice.mode == "required":
                config["toolChoice"] = {"any": {}}
            elif choice.mode == "named":
                config["toolChoice"] = {"tool": {"name": choice.tool_name}}
            else:
                config["toolChoice"] = {"auto": {}}
        body["toolConfig"] = config

    @staticmethod
    def _reasoning(body: dict[str, Any], inference: dict[str, Any], request: Request) -> None:
        """The portable effort in the model family's own field (others have none)."""
        effort = request.reasoning_effort or ""
        extra: dict[str, Any] = {}
        if "claude" in request.model and effort in THINKING_BUDGETS:
            budget = THINKING_BUDGETS[effort]
            limit = inference.get("maxTokens")
            if limit is None:
                inference["maxTokens"] = budget + DEFAULT_MAX_TOKENS
            elif limit - 1024 < 1024:
                return  # too small a limit to think in
            else:
                budget = min(budget, limit - 1024)
            extra["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif "nova-2" in request.model and effort in ("low", "medium", "high"):
            extra["reasoningConfig"] = {"type": "enabled", "maxReasoningEffort": effort}
        if extra:
            body["additionalModelRequestFields"] = extra

    def parse(self, body: bytes) -> Response:
        data = decode_json(body, "Converse response")
        if "output" not in data:
            raise classify(PROVIDER, None, data)
        builder = ResponseBuilder(PROVIDER)
        builder.start()
        message = (data.get("output") or {}).get("message") or {}
        reasoning_chars = 0
        for index, block in enumerate(message.get("content") or ()):
            key = str(index)
            if "text" in block:
                builder.text(key, block["text"])
            elif "toolUse" in block:
                use = block["toolUse"]
                builder.tool_call(key, use["toolUseId"], use["name"], use.get("input") or {})
            elif "reasoningContent" in block:
                reasoning = block["reasoningContent"]
                if "redactedContent" in reasoning:
                    builder.redacted(reasoning["redactedContent"])
                else:
                    text = reasoning.get("reasoningText") or {}
                    reasoning_chars += len(text.get("text", ""))
                    builder.reasoning(key, text.get("text", ""), signature=text.get("signature"))
            builder.end(key)
        usage = usage_from(data.get("usage") or {}, reasoning_chars)
        response = builder.finish(finish_reason(data.get("stopReason")), usage)
        builder.drain()
        return response

    def stream_parser(self) -> StreamParser:
        return ConverseStream(ResponseBuilder(PROVIDER))


class ConverseStream(StreamParser):
    """ConverseStream's events. The stop reason comes in ``messageStop`` and the usage
    after it, in ``metadata``: the answer is finished there (or at the end of the body
    when no metadata came)."""

    def __init__(self, builder: ResponseBuilder) -> None:
        super().__init__(builder)
        self.stop_reason: str | None = None
        self.reasoning_chars = 0

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        if self.finished is not None:
            return []
        data = decode_json(event.data, f"Converse {event.event} event")
        b = self.builder
        kind = event.event
        key = str(data.get("contentBlockIndex", 0))
        if kind == "contentBlockDelta":
            delta = data.get("delta") or {}
            if "text" in delta:
                b.text(key, delta["text"])
            elif "toolUse" in delta:
                b.tool_args(key, (delta["toolUse"] or {}).get("input", ""))
            elif "reasoningContent" in delta:
                reasoning = delta["reasoningContent"] or {}
                if "redactedContent" in reasoning:
                    b.redacted(reasoning["redactedContent"])
                else:
                    text = reasoning.get("text", "")
                    self.reasoning_chars += len(text)
                    b.reasoning(key, text, signature=reasoning.get("signature"))
        elif kind == "contentBlockStart":
            use = (data.get("start") or {}).get("toolUse")
            if use:
                b.tool_start(key, use.get("toolUseId", ""), use.get("name", ""))
        elif kind == "contentBlockStop":
            b.end(key)
        elif kind == "messageStart":
            b.start()
        elif kind == "messageStop":
            self.stop_reason = data.get("stopReason")
        elif kind == "metadata":
            self._finish(data.get("usage") or {})
        return b.drain()

    def _finish(self, usage: dict[str, Any]) -> None:
        usage_now = usage_from(usage, self.reasoning_chars)
        self.finished = self.builder.finish(finish_reason(self.stop_reason), usage_now)

    def close(self) -> list[StreamEvent]:
        if self.finished is None and self.stop_reason is not None:
            self._finish({})
        return super().close()
