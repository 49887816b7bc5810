"""A turn made concrete for one request: ids assigned, text cut into deltas.

The wire encoders all read this one shape, so every format says the same thing.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import msgspec

from actors.mockllm.script import Turn

encode = msgspec.json.Encoder().encode


class Call(msgspec.Struct, frozen=True):
    id: str
    name: str
    arguments: str
    pieces: list[str]


class Answer(msgspec.Struct, frozen=True):
    id: str
    model: str
    text: str
    text_pieces: list[str]
    reasoning: str
    reasoning_pieces: list[str]
    signature: str
    calls: list[Call]
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int | None
    cache_read: int | None
    cache_write: int | None
    finish: str
    request: dict[str, Any] = {}
    """The request's JSON body: what the Responses wire echoes in its response object."""
    created: int = 1_700_000_000

    @property
    def args(self) -> list[dict[str, Any]]:
        return [msgspec.json.decode(call.arguments) for call in self.calls]


def pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def as_base64(value: str) -> str:
    """``value`` if it is already base64, else its base64: real signatures are opaque
    base64 blobs, and google-genai decodes Gemini's ``thoughtSignature`` as bytes."""
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return base64.b64encode(value.encode()).decode()
    return value


def default_signature(number: int) -> str:
    return base64.b64encode(f"mock-signature-{number}".encode()).decode()


def make_answer(
    turn: Turn,
    number: int,
    model: str,
    delta_size: int,
    request: dict[str, Any] | None = None,
) -> Answer:
    calls = []
    for index, spec in enumerate(turn.tool_calls):
        raw = spec.arguments if isinstance(spec.arguments, str) else encode(spec.arguments).decode()
        call_id = spec.id or f"call_{number}_{index}"
        calls.append(Call(call_id, spec.name, raw, pieces(raw, delta_size) or [""]))
    usage = turn.usage
    output = usage.output
    if output is None:
        output = max(
            1, (len(turn.text) + len(turn.reasoning) + sum(len(c.arguments) for c in calls)) // 4
        )
    finish = turn.finish or ("tool_calls" if calls else "stop")
    return Answer(
        id=f"mock-{number}",
        model=model,
        text=turn.text,
        text_pieces=pieces(turn.text, delta_size),
        reasoning=turn.reasoning,
        reasoning_pieces=pieces(turn.reasoning, delta_size),
        signature=turn.signature or (default_signature(number) if turn.reasoning else ""),
        calls=calls,
        input_tokens=usage.input,
        output_tokens=output,
        reasoning_tokens=usage.reasoning,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        finish=finish,
        request=request if isinstance(request, dict) else {},
    )


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE frame; ``data`` is JSON-encoded unless it is already bytes."""
    body = data if isinstance(data, bytes) else encode(data)
    if event:
        return b"event: " + event.encode() + b"\ndata: " + body + b"\n\n"
    return b"data: " + body + b"\n\n"
