"""The mock's AWS Bedrock wire: Anthropic Messages events inside AWS event-stream frames.

Bedrock's ``invoke-with-response-stream`` sends each Anthropic stream event as one
binary event-stream message (prelude with lengths and CRC32, string headers, a JSON
payload ``{"bytes": <base64 of the event>}``, a message CRC32); errors after the
start are ``:message-type: exception`` messages. ``invoke`` answers the plain
Anthropic JSON. This module only frames: the events come from ``wire_anthropic``.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib

from actors.mockllm import wire_anthropic
from actors.mockllm.answer import Answer, encode

EVENT_STREAM = "application/vnd.amazon.eventstream"
BODY_FORMAT = {"bedrock": "anthropic"}
"""The request body format each extra wire uses (for scripted conversations)."""

ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
"""The exception Bedrock names in ``x-amzn-ErrorType`` for each HTTP status."""

_DATA = re.compile(rb"^data: ?(.*)$", re.MULTILINE)


def event_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message with string headers (header value type 7)."""
    encoded = b"".join(
        bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
        for name, value in ((k.encode(), v.encode()) for k, v in headers.items())
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    head = prelude + struct.pack(">I", zlib.crc32(prelude))
    message = head + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def chunk(event_json: bytes) -> bytes:
    payload = encode({"bytes": base64.b64encode(event_json).decode()})
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return event_message(headers, payload)


def reframe(sse_frames: list[bytes]) -> list[bytes]:
    """Anthropic SSE frames (``event:``/``data:``) as Bedrock event-stream messages."""
    out = []
    for frame in sse_frames:
        for data in _DATA.findall(frame):
            if data.strip():
                out.append(chunk(data.strip()))
    return out


def stream(a: Answer) -> list[bytes]:
    return reframe(wire_anthropic.stream(a))


def error_event(message: str, sequence: int = 0) -> bytes:
    headers = {
        ":exception-type": "internalServerException",
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return event_message(headers, encode({"message": message}))


def error_body(status: int, message: str) -> bytes:
    return encode({"message": message})


def error_headers(status: int) -> dict[str, str]:
    name = ERROR_TYPES.get(status, "InternalServerException" if status >= 500 else "")
    if not name:
        return {}
    return {"x-amzn-errortype": f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
