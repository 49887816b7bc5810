"""The mock's Gemini wire format (``generateContent`` and ``alt=sse`` streams, CRLF)."""

from __future__ import annotations

from typing import Any

from actors.mockllm.answer import Answer, as_base64, encode

FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP"}
STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _frame(data: dict[str, Any]) -> bytes:
    return b"data: " + encode(data) + b"\r\n\r\n"


def _usage(a: Answer) -> dict[str, Any]:
    usage = {
        "promptTokenCount": a.input_tokens,
        "candidatesTokenCount": a.output_tokens,
        "totalTokenCount": a.input_tokens + a.output_tokens + (a.reasoning_tokens or 0),
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": a.input_tokens}],
    }
    if a.reasoning_tokens is not None:
        usage["thoughtsTokenCount"] = a.reasoning_tokens
    if a.cache_read is not None:
        usage["cachedContentTokenCount"] = a.cache_read
    return usage


def _call_parts(a: Answer) -> list[dict[str, Any]]:
    parts = []
    for index, (call, args) in enumerate(zip(a.calls, a.args, strict=True)):
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": args}}
        if index == 0 and a.signature:
            part["thoughtSignature"] = as_base64(a.signature)
        parts.append(part)
    return parts


def _chunk(a: Answer, parts: list[dict[str, Any]], last: bool = False) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    data: dict[str, Any] = {"candidates": [candidate], "modelVersion": a.model, "responseId": a.id}
    if last:
        candidate["finishReason"] = FINISH.get(a.finish, "OTHER")
        data["usageMetadata"] = _usage(a)
    return data


def _sign_text(a: Answer, parts: list[dict[str, Any]]) -> None:
    """Without a function call, Gemini puts the signature on the answer's last text part."""
    if a.signature and not a.calls:
        if parts and "text" in parts[-1] and not parts[-1].get("thought"):
            parts[-1] = {**parts[-1], "thoughtSignature": as_base64(a.signature)}
        else:
            parts.append({"text": "", "thoughtSignature": as_base64(a.signature)})


def complete(a: Answer) -> bytes:
    parts: list[dict[str, Any]] = []
    if a.reasoning:
        parts.append({"text": a.reasoning, "thought": True})
    if a.text:
        parts.append({"text": a.text})
    parts += _call_parts(a)
    _sign_text(a, parts)
    return encode(_chunk(a, parts, last=True))


def stream(a: Answer) -> list[bytes]:
    chunks = [_chunk(a, [{"text": p, "thought": True}]) for p in a.reasoning_pieces]
    chunks += [_chunk(a, [{"text": p}]) for p in a.text_pieces]
    calls = _call_parts(a)
    if calls:
        chunks.append(_chunk(a, calls))
    if chunks:
        parts = list(chunks[-1]["candidates"][0]["content"]["parts"])
        _sign_text(a, parts)
        chunks[-1] = _chunk(a, parts, last=True)
    else:
        chunks.append(_chunk(a, [{"text": ""}], last=True))
    return [_frame(chunk) for chunk in chunks]


def error_event(message: str, sequence_number: int = 0) -> bytes:
    return _frame({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})


def error_body(status: int, message: str, retry_after: float | None = None) -> bytes:
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "status": STATUS.get(status, "UNKNOWN"),
    }
    if retry_after is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"}
        ]
    return encode({"error": error})
