"""An incremental Server-Sent Events parser that works on bytes as they arrive.

It follows the WHATWG framing (``event:``, ``data:`` possibly over several lines,
``id:``, ``retry:``, comments, blank line = dispatch) and every line ending (LF,
CRLF, CR: Gemini sends CRLF). Data stays bytes so the adapters hand it straight to
msgspec without decoding twice.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from actors.models.errors import StreamError

MAX_EVENT_BYTES = 32 * 1024 * 1024
"""A single event larger than this is treated as a broken stream, not buffered."""


class SSEEvent(msgspec.Struct, frozen=True):
    event: str
    data: bytes
    id: str | None = None


class SSEParser:
    """Feed it chunks with :meth:`feed`; it yields complete events."""

    __slots__ = ("_buffer", "_data", "_event", "_id", "_pending_cr")

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[bytes] = []
        self._id: str | None = None
        self._pending_cr = False

    def feed(self, chunk: bytes) -> Iterator[SSEEvent]:
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split across two chunks
        self._pending_cr = False
        buffer = self._buffer + chunk if self._buffer else chunk
        lines = buffer.splitlines(keepends=True)
        if lines and not lines[-1].endswith((b"\n", b"\r")):
            self._buffer = lines.pop()
            if len(self._buffer) > MAX_EVENT_BYTES:
                raise StreamError(f"SSE line longer than {MAX_EVENT_BYTES} bytes")
        else:
            self._buffer = b""
        if lines and lines[-1].endswith(b"\r"):
            self._pending_cr = True
        for line in lines:
            event = self._line(line.rstrip(b"\r\n"))
            if event is not None:
                yield event

    def close(self) -> Iterator[SSEEvent]:
        """End of stream: a last event without its blank line is still delivered."""
        if self._buffer:
            event = self._line(self._buffer)
            self._buffer = b""
            if event is not None:
                yield event
        event = self._line(b"")
        if event is not None:
            yield event

    def _line(self, line: bytes) -> SSEEvent | None:
        if not line:
            if not self._data and not self._event:
                return None
            data = b"\n".join(self._data)
            event = SSEEvent(self._event or "message", data, self._id)
            self._event = ""
            self._data = []
            return event
        if line[0] == 58:  # b":" comment (OpenRouter's ": OPENROUTER PROCESSING")
            return None
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self._data.append(value)
            if len(self._data) > 1 and sum(map(len, self._data)) > MAX_EVENT_BYTES:
                raise StreamError(f"SSE event larger than {MAX_EVENT_BYTES} bytes")
        elif field == b"event":
            try:
                self._event = value.decode()
            except UnicodeDecodeError as error:
                raise StreamError(f"SSE event name is not UTF-8: {value[:80]!r}") from error
        elif field == b"id":
            self._id = value.decode("utf-8", "replace")
        # "retry" and unknown fields are ignored, as the SSE standard says.
        return None
