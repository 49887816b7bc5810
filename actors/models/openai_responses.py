"""OpenAI Responses (``/v1/responses``), complete and streamed.

Reasoning is requested with ``reasoning.effort`` and ``reasoning.summary``; the
summaries (and raw reasoning text where a server sends it) become thinking parts,
whose encrypted content is kept as the signature and sent back as a ``reasoning``
input item. Requests are stateless (``store: false``), so that encrypted reasoning
is what carries the model's chain of thought from one turn to the next.
"""

from __future__ import annotations

from typing import Any

import msgspec

from actors.models.adapter import (
    Adapter,
    HttpCall,
    StreamParser,
    decode_json,
    encode,
)
from actors.models.builder import ResponseBuilder
from actors.models.errors import classify
from actors.models.openai_responses_input import (
    PROVIDER,
    after_last_answer,
    message_items,
    tool_item,
)
from actors.models.sse import SSEEvent
from actors.models.wire_cache import FlatState, leading_system
from protocol.llm import (
    FinishReason,
    Request,
    Response,
    StreamEvent,
    Usage,
)


def usage_from(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    inp = data.get("input_tokens") or 0
    out = data.get("output_tokens") or 0
    return Usage(
        inp,
        out,
        data.get("total_tokens") or inp + out,
        (data.get("output_tokens_details") or {}).get("reasoning_tokens"),
        (data.get("input_tokens_details") or {}).get("cached_tokens"),
        None,
    )


def finish_reason(response: dict[str, Any], has_tool_calls: bool) -> FinishReason:
    status = response.get("status") or "completed"
    if status == "completed":
        return FinishReason("tool_calls" if has_tool_calls else "stop", status)
    if status == "incomplete":
        why = (response.get("incomplete_details") or {}).get("reason") or status
        if why == "max_output_tokens":
            return FinishReason("length", why)
        if why == "content_filter":
            return FinishReason("content_filter", why)
        return FinishReason("other", why)
    if status == "failed":
        return FinishReason("error", status)
    return FinishReason("other", status)


class OpenAIResponsesAdapter(Adapter):
    provider = PROVIDER

    def _state(self) -> FlatState:
        return FlatState(message_items)

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        options = self.options(request)
        if options.get("previous_response_id"):
            tail = after_last_answer(request.messages)
            items: list[Any] = [item for m in tail for item in message_items(m)]
            carries_reasoning = any(item["type"] == "reasoning" for item in items)
        else:
            lead = leading_system(request.messages, ("system",))  # developer ones are items
            state = self.cache.state(request.messages[lead:], self._state)
            items, carries_reasoning = state.items, "reasoning" in state.kinds
        body: dict[str, Any] = {"model": request.model, "input": items}
        instructions = "\n\n".join(m.text for m in request.messages if m.role == "system")
        if instructions:
            body["instructions"] = instructions
        if request.tools:
            body["tools"] = self.tool_list(request.tools, tool_item)
            choice = request.tool_choice
            if choice is not None:
                if choice.mode == "named":
                    body["tool_choice"] = {"type": "function", "name": choice.tool_name}
                else:
                    body["tool_choice"] = choice.mode
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.reasoning_effort or request.reasoning_summary:
            reasoning: dict[str, Any] = {}
            if request.reasoning_effort:
                reasoning["effort"] = request.reasoning_effort
            if request.reasoning_summary:
                reasoning["summary"] = request.reasoning_summary
            body["reasoning"] = reasoning
        if request.reasoning_effort or request.reasoning_summary or carries_reasoning:
            # With store: false, reasoning carries over between turns only encrypted.
            body["include"] = ["reasoning.encrypted_content"]
        fmt = request.response_format
        if fmt is not None and fmt.type == "json_schema":
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": "output",
                    "schema": fmt.json_schema,
                    "strict": fmt.strict,
                }
            }
        elif fmt is not None and fmt.type == "json":
            body["text"] = {"format": {"type": "json_object"}}
        if request.metadata:
            body["metadata"] = request.metadata
        body["store"] = False
        if stream:
            body["stream"] = True
        body.update(options)  # previous_response_id, prompt_cache_key, store, ...
        headers = {}
        if self.endpoint.api_key:  # a local server needs none: send no header at all
            headers["authorization"] = f"Bearer {self.endpoint.api_key}"
        if self.endpoint.organization:
            headers["openai-organization"] = self.endpoint.organization
        if self.endpoint.project:
            headers["openai-project"] = self.endpoint.project
        url = f"{self.endpoint.base_url}/responses"
        return HttpCall("POST", url, self.headers(headers), encode(body))

    def parse(self, body: bytes) -> Response:
        data = decode_json(body, "OpenAI response")
        if data.get("error") and not data.get("output"):
            raise classify(PROVIDER, None, data)
        builder = ResponseBuilder(PROVIDER)
        for index, item in enumerate(data.get("output") or ()):
            add_item(builder, str(index), item)
        response = finish(builder, data)
        builder.drain()
        return response

    def stream_parser(self) -> StreamParser:
        return ResponsesStream(ResponseBuilder(PROVIDER))


def add_item(builder: ResponseBuilder, key: str, item: dict[str, Any]) -> None:
    """One whole output item (complete answers, and items a stream only sent whole)."""
    kind = item.get("type")
    if kind == "message":
        for index, content in enumerate(item.get("content") or ()):
            if content.get("type") == "output_text":
                builder.text(f"{key}.{index}", content.get("text", ""))
            elif content.get("type") == "refusal":
                builder.text(f"{key}.{index}", content.get("refusal", ""))
            builder.end(f"{key}.{index}")
    elif kind == "function_call":
        builder.tool_call(
            key, item.get("call_id", ""), item.get("name", ""), item.get("arguments", "")
        )
    elif kind == "reasoning":
        texts = [s.get("text", "") for s in item.get("summary") or ()]
        texts += [c.get("text", "") for c in item.get("content") or () if c.get("text")]
        builder.reasoning(
            key,
            "\n\n".join(texts),
            item_id=item.get("id"),
            signature=item.get("encrypted_content"),
        )
        builder.end(key)


def finish(builder: ResponseBuilder, data: dict[str, Any]) -> Response:
    builder.start(data.get("id", ""), data.get("model", ""))
    reason = finish_reason(data, builder.has_tool_calls())
    return builder.finish(reason, usage_from(data.get("usage")))


class _Head(msgspec.Struct):
    """What the lifecycle events' response object is read for; the rest of it (the
    echoed tools, instructions, output) is skipped without being built."""

    id: str = ""
    model: str = ""
    status: str | None = None
    incomplete_details: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None


class _Lifecycle(msgspec.Struct):
    response: _Head = msgspec.field(default_factory=_Head)


_LIFECYCLE = msgspec.json.Decoder(_Lifecycle)
_LIFECYCLE_EVENTS = frozenset(
    {"response.created", "response.in_progress", "response.completed", "response.incomplete"}
)


class ResponsesStream(StreamParser):
    def __init__(self, builder: ResponseBuilder) -> None:
        super().__init__(builder)
        self.part_index: dict[str, int] = {}  # reasoning key -> current summary part
        self.seen: set[str] = set()

    def _key(self, data: dict[str, Any]) -> str:
        """The output index: item ids may change mid-stream (GitHub Copilot rotates them)."""
        index = data.get("output_index")
        if index is not None:
            return f"#{index}"
        return data.get("item_id") or (data.get("item") or {}).get("id") or "#0"

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        if event.data == b"[DONE]" or self.finished is not None:
            return []  # OpenRouter ends with [DONE]; recordings may append a next response
        if event.event in _LIFECYCLE_EVENTS:
            done = self._lifecycle(event)
            if done is not None:
                return done
        data = decode_json(event.data, f"OpenAI {event.event} event")
        kind = data.get("type") or event.event
        b = self.builder
        if kind == "response.output_text.delta":
            key = self._key(data)
            self.seen.add(key)
            b.text(f"{key}.{data.get('content_index', 0)}", data.get("delta", ""))
        elif kind == "response.function_call_arguments.delta":
            b.tool_args(self._key(data), data.get("delta", ""))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            key = self._key(data)
            self.seen.add(key)
            index = data.get("summary_index", data.get("content_index", 0))
            # Summary parts of one reasoning item are joined by a blank line.
            separator = "\n\n" if index != self.part_index.get(key, index) else ""
            self.part_index[key] = index
            delta = data.get("delta", "")
            b.reasoning(key, delta, separator=separator, item_id=data.get("item_id"))
        elif kind == "response.output_item.added":
            item = data.get("item") or {}
            if item.get("type") == "function_call":
                key = self._key(data)
                b.tool_start(key, item.get("call_id", ""), item.get("name", ""))
                self.seen.add(key)
        elif kind == "response.output_item.done":
            self._item_done(data)
        elif kind == "response.output_text.done":
            b.end(f"{self._key(data)}.{data.get('content_index', 0)}")
        elif kind in ("response.created", "response.in_progress"):
            response = data.get("response") or {}
            b.start(response.get("id", ""), response.get("model", ""))
        elif kind in ("response.completed", "response.incomplete"):
            self.finished = finish(b, data.get("response") or {})
        elif kind == "response.failed":
            response = data.get("response") or {}
            raise classify(PROVIDER, None, {"error": response.get("error") or response})
        elif kind == "error":
            raise classify(PROVIDER, None, {"error": data.get("error") or data})
        return b.drain()

    def _lifecycle(self, event: SSEEvent) -> list[StreamEvent] | None:
        """The big lifecycle events, read for their head only (None: read it whole)."""
        try:
            head = _LIFECYCLE.decode(event.data).response
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        b = self.builder
        if event.event in ("response.created", "response.in_progress"):
            b.start(head.id, head.model)
        else:
            data = {
                "id": head.id,
                "model": head.model,
                "status": head.status,
                "incomplete_details": head.incomplete_details,
                "usage": head.usage,
            }
            self.finished = finish(b, data)
        return b.drain()

    def _item_done(self, data: dict[str, Any]) -> None:
        b = self.builder
        item = data.get("item") or {}
        key = self._key(data)
        kind = item.get("type")
        if kind == "function_call":
            if not b.is_open(key):
                b.tool_start(key, item.get("call_id", ""), item.get("name", ""))
            b.end(key, raw_arguments=item.get("arguments"))
        elif kind == "reasoning":
            if key in self.seen:
                b.end(key, signature=item.get("encrypted_content"), item_id=item.get("id"))
            elif item.get("encrypted_content") or item.get("summary"):
                add_item(b, key, item)
        elif kind == "message":
            if key in self.seen:
                for index, _ in enumerate(item.get("content") or ()):
                    b.end(f"{key}.{index}")
            else:
                add_item(b, key, item)
