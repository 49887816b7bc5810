"""OpenRouter: Chat Completions plus ``reasoning_details``.

OpenRouter returns a model's reasoning as ``reasoning_details`` entries (readable
``reasoning.text`` with a ``signature`` for Claude, opaque ``reasoning.encrypted``
for OpenAI's models, ``reasoning.summary``), and reasoning only carries over to the
next turn when those entries are sent back unchanged on the assistant message. The
entries are gathered (stream fragments merged by ``index``), kept on the answer's
:class:`ThinkingPart` (``provider="openrouter"``, the JSON in ``signature``) and echoed
back on the next request. The portable ``reasoning_effort`` becomes
``reasoning: {"effort": ...}``.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from actors.models.adapter import HttpCall, StreamParser, decode_json, encode
from actors.models.builder import ResponseBuilder
from actors.models.config import Endpoint
from actors.models.openai_chat import PROVIDER as CHAT
from actors.models.openai_chat import ChatStream, OpenAIChatAdapter
from actors.models.sse import SSEEvent
from protocol.llm import Finish, Message, Request, Response, StreamEvent, ThinkingPart

PROVIDER = "openrouter"
OPENROUTER_URL = "https://openrouter.ai/api/v1"


def merge_details(gathered: dict[int, dict[str, Any]], details: Any) -> None:
    """Stream fragments of reasoning_details, merged entry by entry (by ``index``)."""
    entries: list[Any] = details if isinstance(details, list) else []
    for position, detail in enumerate(entries):
        if not isinstance(detail, dict):
            continue
        index = detail.get("index", position)
        entry = gathered.setdefault(index, {})
        for key, value in detail.items():
            if value is None or value == "":
                continue
            if key in ("text", "summary", "data") and isinstance(value, str) and key in entry:
                entry[key] += value
            else:
                entry[key] = value


def with_details(response: Response, details: list[dict[str, Any]]) -> Response:
    """The response with its reasoning as one OpenRouter ThinkingPart carrying details."""
    parts = list(response.message.content)
    thinking = [p for p in parts if type(p) is ThinkingPart]
    text = "".join(p.text for p in thinking)
    kept = [p for p in parts if type(p) is not ThinkingPart]
    signature = json.dumps(details, separators=(",", ":"))
    message = Message("assistant", [ThinkingPart(text, signature, PROVIDER), *kept])
    return msgspec.structs.replace(response, message=message, provider=PROVIDER)


class OpenRouterStream(ChatStream):
    def __init__(self, builder: ResponseBuilder) -> None:
        super().__init__(builder)
        self.details: dict[int, dict[str, Any]] = {}

    def feed(self, event: SSEEvent) -> list[StreamEvent]:
        if self.finished is None and b"reasoning_details" in event.data:
            data = decode_json(event.data, "chat completion chunk")
            for choice in data.get("choices") or ():
                if choice.get("index", 0) == 0:
                    delta = choice.get("delta") or {}
                    merge_details(self.details, delta.get("reasoning_details"))
        return self._attach(super().feed(event))

    def close(self) -> list[StreamEvent]:
        return self._attach(super().close())

    def _attach(self, events: list[StreamEvent]) -> list[StreamEvent]:
        if not self.details or self.finished is None or self.finished.provider == PROVIDER:
            return events
        details = [self.details[index] for index in sorted(self.details)]
        self.finished = with_details(self.finished, details)
        return [Finish(self.finished) if type(e) is Finish else e for e in events]


class OpenRouterAdapter(OpenAIChatAdapter):
    provider = PROVIDER

    def build(self, request: Request, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        body = decode_json(call.body, "request")
        answers = iter(m for m in request.messages if m.role == "assistant")
        for entry in body.get("messages") or ():
            if entry.get("role") != "assistant":
                continue
            message = next(answers, None)
            if message is None:
                break
            for part in message.content:
                if type(part) is ThinkingPart and part.provider == PROVIDER and part.signature:
                    entry["reasoning_details"] = json.loads(part.signature)
                    entry.pop("reasoning_content", None)
        effort = body.pop("reasoning_effort", None)
        if effort and "reasoning" not in body:
            body["reasoning"] = {"effort": effort}
        return HttpCall(call.method, call.url, call.headers, encode(body))

    def parse(self, body: bytes) -> Response:
        response = super().parse(body)
        data = decode_json(body, "chat completion")
        choice = (data.get("choices") or [{}])[0]
        gathered: dict[int, dict[str, Any]] = {}
        merge_details(gathered, (choice.get("message") or {}).get("reasoning_details"))
        if not gathered:
            return response
        return with_details(response, [gathered[index] for index in sorted(gathered)])

    def stream_parser(self) -> StreamParser:
        return OpenRouterStream(ResponseBuilder(CHAT))


def openrouter_adapter(endpoint: Endpoint) -> OpenRouterAdapter:
    return OpenRouterAdapter(endpoint)
