"""The mock's AWS Bedrock Converse wire: ``converse`` answers a ``ConverseResponse``
JSON, ``converse-stream`` sends AWS event-stream messages named by ``:event-type``
(``messageStart``, ``contentBlockStart`` for tool use, ``contentBlockDelta``,
``contentBlockStop``, ``messageStop``, then ``metadata`` with usage and metrics).
As Bedrock does, each event's JSON carries a ``p`` padding field that readers skip.
"""

from __future__ import annotations

from typing import Any

from actors.mockllm.answer import Answer, encode
from actors.mockllm.wire_bedrock import event_message

STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _usage(a: Answer) -> dict[str, Any]:
    usage = {
        "inputTokens": a.input_tokens,
        "outputTokens": a.output_tokens,
        "totalTokens": a.input_tokens + a.output_tokens,
    }
    if a.cache_read is not None:
        usage["cacheReadInputTokens"] = a.cache_read
    if a.cache_write is not None:
        usage["cacheWriteInputTokens"] = a.cache_write
    return usage


def _reasoning(a: Answer) -> dict[str, Any]:
    return {"reasoningContent": {"reasoningText": {"text": a.reasoning, "signature": a.signature}}}


def complete(a: Answer) -> bytes:
    content: list[dict[str, Any]] = [_reasoning(a)] if a.reasoning else []
    if a.text:
        content.append({"text": a.text})
    for call, args in zip(a.calls, a.args, strict=True):
        content.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": args}})
    return encode(
        {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": STOP.get(a.finish, a.finish),
            "usage": _usage(a),
            "metrics": {"latencyMs": 12},
        }
    )


def event(name: str, data: dict[str, Any], number: int = 0) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    padded = {**data, "p": PADDING[: 1 + number % len(PADDING)]}
    return event_message(headers, encode(padded))


def stream(a: Answer) -> list[bytes]:
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    index = 0

    def block(deltas: list[dict[str, Any]], start: dict[str, Any] | None = None) -> None:
        nonlocal index
        if start is not None:
            events.append(("contentBlockStart", {"start": start, "contentBlockIndex": index}))
        events.extend(
            ("contentBlockDelta", {"delta": delta, "contentBlockIndex": index}) for delta in deltas
        )
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
        index += 1

    if a.reasoning:
        deltas = [{"reasoningContent": {"text": piece}} for piece in a.reasoning_pieces]
        block([*deltas, {"reasoningContent": {"signature": a.signature}}])
    if a.text:
        block([{"text": piece} for piece in a.text_pieces])
    for call in a.calls:
        start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
        block([{"toolUse": {"input": piece}} for piece in call.pieces], start)
    events.append(("messageStop", {"stopReason": STOP.get(a.finish, a.finish)}))
    events.append(("metadata", {"usage": _usage(a), "metrics": {"latencyMs": 12}}))
    return [event(name, data, number) for number, (name, data) in enumerate(events)]


def error_body(status: int, message: str) -> bytes:
    return encode({"message": message})
