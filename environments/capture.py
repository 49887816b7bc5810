"""Capturing a command's output under a memory cap, keeping its head and tail.

A command may print gigabytes (a 10 MB single line is the classic case).
:class:`HeadTail` keeps the first and last ``cap / 2`` bytes and counts what it
dropped from the middle; :class:`OutputCollector` adds live deltas to whoever
watches the command. Both environments use them, so output is cut the same way
locally and over SSH.
"""

from __future__ import annotations

import codecs
from collections import deque
from typing import Any, Literal

from protocol.environment import ExecOutput

DEFAULT_CAPTURE_CAP = 1_000_000
"""Bytes kept per stream (half head, half tail); the tools truncate further."""

Stream = Literal["stdout", "stderr"]


class HeadTail:
    """The first and last ``cap / 2`` bytes of a stream, and how much was cut."""

    def __init__(self, cap: int = DEFAULT_CAPTURE_CAP) -> None:
        self._half = max(cap // 2, 1)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.omitted = 0

    def keep(self, chunk: bytes | bytearray) -> None:
        room = self._half - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size > self._half:
            excess = self._tail_size - self._half
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_size -= len(first)
                self.omitted += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_size -= excess
                self.omitted += excess

    def text(self) -> str:
        """The kept output, with a marker where the middle was dropped."""
        head = bytes(self._head).decode("utf-8", errors="replace")
        tail = b"".join(self._tail).decode("utf-8", errors="replace")
        if not self.omitted:
            return head + tail
        return f"{head}\n[... {self.omitted} bytes of output omitted ...]\n{tail}"


class DeltaForwarder:
    """Decodes a stream's chunks incrementally and tells them to ``output_to``."""

    def __init__(self, stream: Stream, output_to: Any) -> None:
        self.stream: Stream = stream
        self._output_to = output_to
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def forward(self, chunk: bytes | bytearray) -> None:
        text = self._decoder.decode(chunk)
        if text:
            await self._output_to.tell(ExecOutput(self.stream, text))


class OutputCollector(HeadTail):
    """Head and tail of one output stream, plus live deltas to ``output_to``."""

    def __init__(self, stream: Stream, cap: int = DEFAULT_CAPTURE_CAP, output_to: Any = None):
        super().__init__(cap)
        self._deltas = DeltaForwarder(stream, output_to) if output_to is not None else None

    async def feed(self, chunk: bytes | bytearray) -> None:
        if not chunk:
            return
        self.keep(chunk)
        if self._deltas is not None:
            await self._deltas.forward(chunk)
