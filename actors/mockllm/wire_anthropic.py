"""The mock's Anthropic Messages wire format, with the usage fields the API sends
(``cache_creation``, ``service_tier``; the running totals in ``message_delta``)."""

from __future__ import annotations

from typing import Any

from actors.mockllm.answer import Answer, encode, sse

STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _usage(a: Answer) -> dict[str, Any]:
    return {
        "input_tokens": a.input_tokens,
        "cache_creation_input_tokens": a.cache_write or 0,
        "cache_read_input_tokens": a.cache_read or 0,
        "cache_creation": {
            "ephemeral_5m_input_tokens": a.cache_write or 0,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": a.output_tokens,
        "service_tier": "standard",
    }


def _blocks(a: Answer) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if a.reasoning:
        blocks.append({"type": "thinking", "thinking": a.reasoning, "signature": a.signature})
    if a.text:
        blocks.append({"type": "text", "text": a.text})
    for call in a.calls:
        args = a.args[a.calls.index(call)]
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": args})
    return blocks


def complete(a: Answer) -> bytes:
    return encode(
        {
            "id": f"msg_{a.id}",
            "type": "message",
            "role": "assistant",
            "model": a.model,
            "content": _blocks(a),
            "stop_reason": STOP.get(a.finish, a.finish),
            "stop_sequence": None,
            "usage": _usage(a),
        }
    )


def stream(a: Answer) -> list[bytes]:
    start_usage = {**_usage(a), "output_tokens": 1}
    message = {
        "id": f"msg_{a.id}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": a.model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}, {"type": "ping"}]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
        index += 1

    if a.reasoning:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in a.reasoning_pieces]
        deltas.append({"type": "signature_delta", "signature": a.signature})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if a.text:
        block(
            {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in a.text_pieces]
        )
    for call in a.calls:
        block(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in call.pieces],
        )
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": STOP.get(a.finish, a.finish), "stop_sequence": None},
            "usage": {
                "input_tokens": a.input_tokens,
                "cache_creation_input_tokens": a.cache_write or 0,
                "cache_read_input_tokens": a.cache_read or 0,
                "output_tokens": a.output_tokens,
            },
        }
    )
    events.append({"type": "message_stop"})
    return [sse(event, event["type"]) for event in events]


def error_event(message: str, sequence_number: int = 0) -> bytes:
    return sse(
        {"type": "error", "error": {"type": "overloaded_error", "message": message}}, "error"
    )


def error_body(status: int, message: str) -> bytes:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    kind = kinds.get(status, "api_error")
    return encode({"type": "error", "error": {"type": kind, "message": message}})
