"""The mock's OpenAI wire formats: Responses and Chat Completions."""

from __future__ import annotations

from typing import Any

from actors.mockllm.answer import Answer, encode, sse

# -- Responses -------------------------------------------------------------------


def _responses_usage(a: Answer) -> dict[str, Any]:
    return {
        "input_tokens": a.input_tokens,
        "input_tokens_details": {"cached_tokens": a.cache_read or 0},
        "output_tokens": a.output_tokens,
        "output_tokens_details": {"reasoning_tokens": a.reasoning_tokens or 0},
        "total_tokens": a.input_tokens + a.output_tokens,
    }


def _responses_output(a: Answer) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if a.reasoning:
        out.append(
            {
                "type": "reasoning",
                "id": f"rs_{a.id}",
                "summary": [{"type": "summary_text", "text": a.reasoning}],
                "encrypted_content": a.signature,
            }
        )
    if a.text:
        out.append(
            {
                "type": "message",
                "id": f"msg_{a.id}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": a.text, "annotations": []}],
            }
        )
    for call in a.calls:
        out.append(
            {
                "type": "function_call",
                "id": f"fc_{call.id}",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "status": "completed",
            }
        )
    return out


def responses_object(a: Answer) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"resp_{a.id}",
        "object": "response",
        "status": "completed",
        "model": a.model,
        "output": _responses_output(a),
        "usage": _responses_usage(a),
    }
    if a.finish == "length":
        body["status"] = "incomplete"
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    return body


def responses_complete(a: Answer) -> bytes:
    return encode(responses_object(a))


def responses_stream(a: Answer) -> list[bytes]:
    events: list[dict[str, Any]] = []
    shell = {"id": f"resp_{a.id}", "object": "response", "status": "in_progress", "model": a.model}
    events.append({"type": "response.created", "response": {**shell, "output": []}})
    events.append({"type": "response.in_progress", "response": {**shell, "output": []}})
    for index, item in enumerate(_responses_output(a)):
        kind = item["type"]
        if kind == "reasoning":
            added = {**item, "summary": []}
            added.pop("encrypted_content")
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            for piece in a.reasoning_pieces:
                events.append(
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "summary_index": 0,
                        "delta": piece,
                    }
                )
        elif kind == "message":
            added = {**item, "status": "in_progress", "content": []}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            for piece in a.text_pieces:
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": piece,
                    }
                )
            events.append(
                {
                    "type": "response.output_text.done",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "text": a.text,
                }
            )
        else:
            added = {**item, "arguments": "", "status": "in_progress"}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            call = next(c for c in a.calls if c.id == item["call_id"])
            for piece in call.pieces:
                events.append(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": piece,
                    }
                )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    final = responses_object(a)
    events.append({"type": "response.completed", "response": final})
    return [
        sse({**event, "sequence_number": number}, event["type"])
        for number, event in enumerate(events)
    ]


def responses_error_event(message: str) -> bytes:
    return sse(
        {"type": "error", "code": "server_error", "message": message, "param": None}, "error"
    )


def openai_error_body(status: int, message: str) -> bytes:
    kinds = {
        401: ("invalid_request_error", "invalid_api_key"),
        403: ("invalid_request_error", "unsupported_country_region_territory"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
    }
    kind, code = kinds.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return encode({"error": {"message": message, "type": kind, "param": None, "code": code}})


# -- Chat Completions ------------------------------------------------------------


def _chat_usage(a: Answer) -> dict[str, Any]:
    return {
        "prompt_tokens": a.input_tokens,
        "completion_tokens": a.output_tokens,
        "total_tokens": a.input_tokens + a.output_tokens,
        "prompt_tokens_details": {"cached_tokens": a.cache_read or 0},
        "completion_tokens_details": {"reasoning_tokens": a.reasoning_tokens or 0},
    }


def chat_complete(a: Answer) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": a.text or None}
    if a.reasoning:
        message["reasoning_content"] = a.reasoning
    if a.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in a.calls
        ]
    return encode(
        {
            "id": f"chatcmpl-{a.id}",
            "object": "chat.completion",
            "created": 0,
            "model": a.model,
            "choices": [{"index": 0, "message": message, "finish_reason": a.finish}],
            "usage": _chat_usage(a),
        }
    )


def chat_stream(a: Answer) -> list[bytes]:
    head = {
        "id": f"chatcmpl-{a.id}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": a.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({**head, "choices": [choice]})

    frames = [chunk({"role": "assistant", "content": ""})]
    frames += [chunk({"reasoning_content": piece}) for piece in a.reasoning_pieces]
    frames += [chunk({"content": piece}) for piece in a.text_pieces]
    for index, call in enumerate(a.calls):
        first = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        frames.append(chunk({"tool_calls": [first]}))
        for piece in call.pieces:
            frames.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    frames.append(chunk({}, a.finish))
    frames.append(sse({**head, "choices": [], "usage": _chat_usage(a)}))
    frames.append(sse(b"[DONE]"))
    return frames


def chat_error_event(message: str) -> bytes:
    return sse({"error": {"message": message, "type": "server_error", "code": "server_error"}})
