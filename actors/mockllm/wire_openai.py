"""The mock's OpenAI Chat Completions wire format, and OpenAI's error bodies.

Chunks carry what the real API sends (``system_fingerprint``, ``logprobs``,
``usage: null`` until the usage chunk, ``refusal`` in the first delta), checked
against the recordings by ``tests/models/test_mock_shapes.py``."""

from __future__ import annotations

from typing import Any

from actors.mockllm.answer import Answer, encode, sse


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
        "prompt_tokens_details": {"cached_tokens": a.cache_read or 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": a.reasoning_tokens or 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _head(a: Answer, kind: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{a.id}",
        "object": kind,
        "created": a.created,
        "model": a.model,
        "service_tier": "default",
        "system_fingerprint": "fp_mock",
    }


def chat_complete(a: Answer) -> bytes:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": a.text or None,
        "refusal": None,
        "annotations": [],
    }
    if a.reasoning:
        message["reasoning_content"] = a.reasoning  # as DeepSeek, vLLM and llama.cpp send it
    if a.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in a.calls
        ]
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": a.finish}
    return encode({**_head(a, "chat.completion"), "choices": [choice], "usage": _chat_usage(a)})


def chat_stream(a: Answer) -> list[bytes]:
    head = _head(a, "chat.completion.chunk")
    usage_asked = bool((a.request.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body: dict[str, Any] = {**head, "choices": [choice]}
        if usage_asked:
            body["usage"] = None
        return sse({**body, "obfuscation": "mock"})

    frames = [chunk({"role": "assistant", "content": "", "refusal": None})]
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
            if piece:
                frames.append(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
    frames.append(chunk({}, a.finish))
    if usage_asked:
        frames.append(sse({**head, "choices": [], "usage": _chat_usage(a), "obfuscation": "m"}))
    frames.append(sse(b"[DONE]"))
    return frames


def chat_error_event(message: str, sequence_number: int = 0) -> bytes:
    error = {"message": message, "type": "server_error", "param": None, "code": "server_error"}
    return sse({"error": error})
