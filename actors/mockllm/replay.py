"""Recorded provider answers, served as they were recorded.

Understands the recordings in ``conformance/providers``: raw SSE bodies (Anthropic
SDK ``.txt``, OpenAI SDK ``.bin``), Vercel ``.chunks.txt`` (one JSON payload per
line; the SSE framing is rebuilt the way the provider frames it), plain ``.json``
bodies, and VCR YAML cassettes (one reply per interaction). Bodies are never
parsed or repaired: a recording with a broken line is served broken.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

SSE = "text/event-stream"
JSON = "application/json"

_TYPE = re.compile(rb'^\{"type":"([^"]+)"')


class Reply(msgspec.Struct, frozen=True):
    """One recorded HTTP answer; ``chunks`` are written one by one (SSE frames)."""

    status: int
    content_type: str
    chunks: list[bytes]
    headers: dict[str, str] = {}
    uri: str = ""
    """The request URI it answered, when the recording says."""

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def split_frames(body: bytes) -> list[bytes]:
    """Cut an SSE body after each blank line, keeping every byte."""
    frames = re.split(rb"(?<=\r\n\r\n)|(?<=\n\n)|(?<=\r\r)", body)
    return [frame for frame in frames if frame]


def frame_chunk_lines(text: bytes) -> bytes:
    """Rebuild SSE from a ``.chunks.txt``: event-typed providers get ``event:`` lines,
    OpenAI-style chunks get ``data:`` only and a final ``[DONE]``."""
    out: list[bytes] = []
    chat = False
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _TYPE.match(line)
        if match:
            out.append(b"event: " + match.group(1) + b"\ndata: " + line + b"\n\n")
        else:
            chat = chat or b'"choices"' in line
            out.append(b"data: " + line + b"\n\n")
    if chat:
        out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def _cassette_reply(interaction: dict[str, Any]) -> Reply:
    request = interaction.get("request") or {}
    response = interaction.get("response") or {}
    headers = {
        str(name).lower(): (value[0] if isinstance(value, list) else str(value))
        for name, value in (response.get("headers") or {}).items()
    }
    content_type = headers.get("content-type", JSON)
    if "parsed_body" in response:
        body = msgspec.json.encode(response["parsed_body"])
    else:
        raw = (response.get("body") or {}).get("string", "")
        body = raw.encode() if isinstance(raw, str) else bytes(raw)
    status = int((response.get("status") or {}).get("code", 200))
    chunks = split_frames(body) if content_type.startswith(SSE) else [body]
    keep = {k: v for k, v in headers.items() if k in ("retry-after",)}
    return Reply(status, content_type, chunks or [b""], keep, str(request.get("uri", "")))


def load_cassette(path: Path) -> list[Reply]:
    import yaml

    # libyaml's loader where PyYAML was built with it: the same safe subset, about
    # twenty times faster on the recordings, which the conformance tests read by the hundred.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(path.read_text(), Loader=loader)
    return [_cassette_reply(interaction) for interaction in data.get("interactions") or ()]


def load_replies(path: str | Path, *, status: int = 200) -> list[Reply]:
    """Every answer a recording holds, in order."""
    path = Path(path)
    name = path.name
    raw = path.read_bytes()
    if name.endswith((".yaml", ".yml")):
        return load_cassette(path)
    if name.endswith(".chunks.txt"):
        return [Reply(status, SSE, split_frames(frame_chunk_lines(raw)))]
    if name.endswith(".json"):
        return [Reply(status, JSON, [raw])]
    return [Reply(status, SSE, split_frames(raw))]
