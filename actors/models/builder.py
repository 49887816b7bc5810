"""Builds the unified stream events and the final Response from provider deltas.

Every adapter feeds the same builder (text, reasoning and tool-call deltas keyed by
the provider's own block or item ids), so the start/delta/end lifecycle, argument
parsing and the accumulated Response are written once. Complete (non-streamed)
answers go through the same builder, so ``complete`` and ``stream`` agree.
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.llm import (
    Finish,
    FinishReason,
    Message,
    Part,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    RedactedThinkingPart,
    Response,
    StreamEvent,
    StreamStart,
    TextDelta,
    TextEnd,
    TextPart,
    TextStart,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)

_decode = msgspec.json.Decoder()


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool arguments as a dict, or ({}, why) when the text is not a JSON object."""
    if not raw.strip():
        return {}, None
    try:
        value = _decode.decode(raw)
    except msgspec.DecodeError as error:
        return {}, f"invalid JSON in tool arguments: {error}"
    if not isinstance(value, dict):
        return {}, f"tool arguments are a JSON {type(value).__name__}, not an object"
    return value, None


class _Slot:
    """One content block under construction."""

    __slots__ = ("chunks", "done", "event_id", "kind", "meta", "part")

    def __init__(self, kind: str, event_id: str, meta: dict[str, Any]) -> None:
        self.kind = kind
        self.event_id = event_id
        self.chunks: list[str] = []
        self.meta = meta
        self.done = False
        self.part: Part | None = None


class ResponseBuilder:
    """Accumulates one response; :meth:`drain` hands over the events produced so far."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.id = ""
        self.model = ""
        self.started = False
        self.events: list[StreamEvent] = []
        self._slots: list[_Slot] = []
        self._open: dict[str, _Slot] = {}
        self._count = 0

    # -- lifecycle ---------------------------------------------------------------

    def start(self, response_id: str = "", model: str = "") -> None:
        if response_id:
            self.id = response_id
        if model:
            self.model = model
        if not self.started:
            self.started = True
            self.events.append(StreamStart(self.id, self.model))

    def restart(self) -> None:
        """Forget the content so far (a provider began the message again)."""
        self._slots.clear()
        self._open.clear()

    @property
    def has_content(self) -> bool:
        return bool(self._slots)

    def drain(self) -> list[StreamEvent]:
        events = self.events
        self.events = []
        return events

    def _open_slot(self, key: str, kind: str, **meta: Any) -> _Slot:
        slot = self._open.get(key)
        if slot is not None and slot.kind == kind:
            return slot
        if slot is not None:
            self.end(key)
        self._count += 1
        slot = _Slot(kind, f"{kind[0]}{self._count}", meta)
        self._open[key] = slot
        self._slots.append(slot)
        if kind == "text":
            self.events.append(TextStart(slot.event_id))
        elif kind == "reasoning":
            self.events.append(ReasoningStart(slot.event_id))
        else:
            self.events.append(ToolCallStart(meta["call_id"], meta["name"]))
        return slot

    def is_open(self, key: str) -> bool:
        return key in self._open

    # -- content -------------------------------------------------------------------

    def text(self, key: str, delta: str, signature: str | None = None) -> None:
        slot = self._open_slot(key, "text")
        if delta:
            slot.chunks.append(delta)
            self.events.append(TextDelta(slot.event_id, delta))
        if signature:
            slot.meta["signature"] = signature

    def reasoning(self, key: str, delta: str, **meta: Any) -> None:
        """Reasoning text; ``meta`` may set signature, item_id, separator."""
        slot = self._open_slot(key, "reasoning")
        if delta:
            separator = meta.pop("separator", "")
            if separator and slot.chunks:
                slot.chunks.append(separator)
                self.events.append(ReasoningDelta(slot.event_id, separator))
            slot.chunks.append(delta)
            self.events.append(ReasoningDelta(slot.event_id, delta))
        meta.pop("separator", None)
        slot.meta.update({name: value for name, value in meta.items() if value is not None})

    def annotate(self, key: str, **meta: Any) -> None:
        """Attach metadata (a signature arriving late) to an open block."""
        slot = self._open.get(key)
        if slot is not None:
            slot.meta.update({name: value for name, value in meta.items() if value is not None})

    def redacted(self, data: str) -> None:
        self._count += 1
        event_id = f"r{self._count}"
        part = RedactedThinkingPart(data, self.provider)
        slot = _Slot("redacted", event_id, {})
        slot.done = True
        slot.part = part
        self._slots.append(slot)
        self.events.append(ReasoningStart(event_id))
        self.events.append(ReasoningEnd(event_id, part))

    def tool_start(self, key: str, call_id: str, name: str, **meta: Any) -> None:
        self._open_slot(key, "tool", call_id=call_id, name=name, **meta)

    def tool_args(self, key: str, delta: str) -> None:
        slot = self._open.get(key)
        if slot is None or slot.kind != "tool" or not delta:
            return
        slot.chunks.append(delta)
        self.events.append(ToolCallDelta(slot.meta["call_id"], delta))

    def tool_call(self, key: str, call_id: str, name: str, arguments: Any, **meta: Any) -> None:
        """A tool call that arrived whole (Gemini, non-streamed answers)."""
        self.tool_start(key, call_id, name, **meta)
        raw = arguments if isinstance(arguments, str) else msgspec.json.encode(arguments).decode()
        self.tool_args(key, raw)
        self.end(key)

    def end(self, key: str, **meta: Any) -> None:
        slot = self._open.pop(key, None)
        if slot is None:
            return
        slot.meta.update({name: value for name, value in meta.items() if value is not None})
        self._close(slot)

    def end_all(self) -> None:
        for key in list(self._open):
            self.end(key)

    def _close(self, slot: _Slot) -> None:
        slot.done = True
        meta = slot.meta
        if slot.kind == "text":
            text = "".join(slot.chunks)
            slot.part = TextPart(text, meta.get("signature"))
            self.events.append(TextEnd(slot.event_id, text))
        elif slot.kind == "reasoning":
            part = ThinkingPart(
                "".join(slot.chunks), meta.get("signature"), self.provider, meta.get("item_id")
            )
            slot.part = part
            self.events.append(ReasoningEnd(slot.event_id, part))
        else:
            raw = meta.get("raw_arguments")
            if raw is None:
                raw = "".join(slot.chunks)
            arguments, problem = parse_arguments(raw)
            call = ToolCall(
                meta["call_id"],
                meta["name"],
                arguments,
                raw,
                problem,
                meta.get("signature"),
                meta.get("type", "function"),
            )
            slot.part = call
            self.events.append(ToolCallEnd(call))

    # -- the end -------------------------------------------------------------------

    def parts(self) -> list[Part]:
        return [slot.part for slot in self._slots if slot.part is not None]

    def has_tool_calls(self) -> bool:
        return any(slot.kind == "tool" for slot in self._slots)

    def finish(self, reason: FinishReason, usage: Usage) -> Response:
        self.start()
        self.end_all()
        message = Message("assistant", self.parts())
        response = Response(self.id, self.model, self.provider, message, reason, usage)
        self.events.append(Finish(response))
        return response
