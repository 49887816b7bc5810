"""The mock's OpenAI Responses wire format, event for event as the real API sends it.

Checked against the recorded real streams in ``conformance/providers`` (see
``tests/models/test_mock_shapes.py``) and read by the official ``openai`` SDK in
every mode (``tests/models/test_mock_sdks.py``): the response object echoes the
request's settings as the API does, text sits inside a content part, reasoning
summaries inside summary parts, and every event carries its ``sequence_number``.
"""

from __future__ import annotations

from typing import Any

from actors.mockllm.answer import Answer, encode, sse

_ECHOED = {
    # request key -> (response key, value when the request does not say)
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "safety_identifier": None,
    "user": None,
    "background": False,
    "parallel_tool_calls": True,
    "store": True,
    "temperature": 1.0,
    "top_p": 1.0,
    "top_logprobs": 0,
    "truncation": "disabled",
    "tool_choice": "auto",
    "service_tier": "default",
}


def _usage(a: Answer) -> dict[str, Any]:
    return {
        "input_tokens": a.input_tokens,
        "input_tokens_details": {"cached_tokens": a.cache_read or 0},
        "output_tokens": a.output_tokens,
        "output_tokens_details": {"reasoning_tokens": a.reasoning_tokens or 0},
        "total_tokens": a.input_tokens + a.output_tokens,
    }


def _tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for tool in request.get("tools") or ():
        if isinstance(tool, dict) and tool.get("type") == "function":
            tools.append({"strict": True, "description": None, "parameters": None, **tool})
        elif isinstance(tool, dict):
            tools.append(tool)
    return tools


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _output(a: Answer) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if a.reasoning:
        out.append(
            {
                "id": f"rs_{a.id}",
                "type": "reasoning",
                "encrypted_content": a.signature,
                "summary": [{"type": "summary_text", "text": a.reasoning}],
            }
        )
    if a.text:
        out.append(
            {
                "id": f"msg_{a.id}",
                "type": "message",
                "status": "completed",
                "content": [_text_part(a.text)],
                "role": "assistant",
            }
        )
    for call in a.calls:
        out.append(
            {
                "id": f"fc_{call.id}",
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments,
                "call_id": call.id,
                "name": call.name,
            }
        )
    return out


def response_object(a: Answer, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    """The response object: its own fields, then the request's settings echoed."""
    request = a.request
    body: dict[str, Any] = {
        "id": f"resp_{a.id}",
        "object": "response",
        "created_at": a.created,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": a.model,
        "output": output,
        "usage": None,
        "metadata": request.get("metadata") or {},
        "tools": _tools(request),
        "reasoning": {"effort": None, "summary": None, **(request.get("reasoning") or {})},
        "text": {"format": {"type": "text"}, "verbosity": "medium", **(request.get("text") or {})},
    }
    for key, default in _ECHOED.items():
        body[key] = request.get(key, default)
    if status in ("completed", "incomplete"):
        body["usage"] = _usage(a)
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    return body


def _final_status(a: Answer) -> str:
    return "incomplete" if a.finish == "length" else "completed"


def complete(a: Answer) -> bytes:
    return encode(response_object(a, _final_status(a), _output(a)))


def _reasoning_events(a: Answer, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index}
    part = {"type": "summary_text", "text": ""}
    done_part = {"type": "summary_text", "text": a.reasoning}
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "summary": []},
        },
        {
            "type": "response.reasoning_summary_part.added",
            **where,
            "summary_index": 0,
            "part": part,
        },
    ]
    events += [
        {
            "type": "response.reasoning_summary_text.delta",
            **where,
            "summary_index": 0,
            "delta": piece,
            "obfuscation": "mock",
        }
        for piece in a.reasoning_pieces
    ]
    events.append(
        {
            "type": "response.reasoning_summary_text.done",
            **where,
            "summary_index": 0,
            "text": a.reasoning,
        }
    )
    events.append(
        {
            "type": "response.reasoning_summary_part.done",
            **where,
            "summary_index": 0,
            "part": done_part,
        }
    )
    return events


def _message_events(a: Answer, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    added = {**item, "status": "in_progress", "content": []}
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": index, "item": added},
        {"type": "response.content_part.added", **where, "part": _text_part("")},
    ]
    events += [
        {
            "type": "response.output_text.delta",
            **where,
            "delta": piece,
            "logprobs": [],
            "obfuscation": "mock",
        }
        for piece in a.text_pieces
    ]
    events.append({"type": "response.output_text.done", **where, "text": a.text, "logprobs": []})
    events.append({"type": "response.content_part.done", **where, "part": _text_part(a.text)})
    return events


def _call_events(a: Answer, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index}
    added = {**item, "status": "in_progress", "arguments": ""}
    call = next(c for c in a.calls if c.id == item["call_id"])
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": index, "item": added}
    ]
    events += [
        {
            "type": "response.function_call_arguments.delta",
            **where,
            "delta": piece,
            "obfuscation": "mock",
        }
        for piece in call.pieces
        if piece
    ]
    events.append(
        {"type": "response.function_call_arguments.done", **where, "arguments": call.arguments}
    )
    return events


def stream(a: Answer) -> list[bytes]:
    events: list[dict[str, Any]] = []
    events.append({"type": "response.created", "response": response_object(a, "in_progress", [])})
    events.append(
        {"type": "response.in_progress", "response": response_object(a, "in_progress", [])}
    )
    output = _output(a)
    for index, item in enumerate(output):
        kind = item["type"]
        if kind == "reasoning":
            events += _reasoning_events(a, index, item)
        elif kind == "message":
            events += _message_events(a, index, item)
        else:
            events += _call_events(a, index, item)
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    status = _final_status(a)
    events.append({"type": f"response.{status}", "response": response_object(a, status, output)})
    return [
        sse({"type": event["type"], "sequence_number": number, **event}, event["type"])
        for number, event in enumerate(events)
    ]


def error_event(message: str, sequence_number: int = 0) -> bytes:
    """The in-stream error as the API sends it: nested, with its sequence number."""
    error = {"type": "server_error", "code": "server_error", "message": message, "param": None}
    return sse({"type": "error", "sequence_number": sequence_number, "error": error}, "error")
