"""Loop detection (coding-agent-loop-spec §2.10).

Each tool call is reduced to a signature (its name and a hash of its arguments in
canonical form); when the last ``window`` signatures are one pattern of length 1,
2 or 3 repeated, the model is told to try something else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from protocol.llm import ToolCall
from protocol.session import SessionConfig

_ENCODER = msgspec.json.Encoder(order="sorted")


def call_signature(name: str, arguments: dict[str, Any]) -> str:
    """Name plus a digest of the arguments, key order ignored."""
    digest = hashlib.blake2b(_ENCODER.encode(arguments), digest_size=8).hexdigest()
    return f"{name}:{digest}"


def detect_loop(signatures: Sequence[str], window: int) -> bool:
    """True when the last ``window`` signatures repeat a pattern of length 1, 2 or 3."""
    if window <= 0 or len(signatures) < window:
        return False
    recent = list(signatures[-window:])
    for length in (1, 2, 3):
        if window % length:
            continue
        pattern = recent[:length]
        if all(recent[i : i + length] == pattern for i in range(length, window, length)):
            return True
    return False


def loop_warning(window: int) -> str:
    """The spec's text for the steering message."""
    return (
        f"Loop detected: the last {window} tool calls follow a repeating pattern. "
        "Try a different approach."
    )


class LoopWatch:
    """The signatures of a session's tool calls since the last loop it found."""

    def __init__(self) -> None:
        self._signatures: list[str] = []

    def warning_after(self, calls: Sequence[ToolCall], config: SessionConfig) -> str | None:
        """Add a round's calls; the warning for the model when they close a loop."""
        if not config.enable_loop_detection:
            return None
        self._signatures.extend(call_signature(c.name, c.arguments) for c in calls)
        if not detect_loop(self._signatures, config.loop_detection_window):
            return None
        self._signatures.clear()
        return loop_warning(config.loop_detection_window)
