"""The working indicator: a spinner while a model thinks, with its reasoning live.

While a model call runs, the bottom of the terminal shows one spinner line per
thinking session (``thinking 2.4s``) and, dim under it, the last lines of the
reasoning and text streaming in. The region is transient: when the answer is
complete it disappears and the renderer prints the answer for good above it.

It is drawn by ``rich.live.Live``, whose refresh thread only reads a snapshot
taken under a lock; the trio side only updates the state. Only used on a styled
terminal: plain output (a pipe, ``NO_COLOR``) never gets a spinner.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

TAIL_LINES = 3
"""How many lines of the streaming reasoning/text the indicator shows."""


@dataclass
class _Thinking:
    started: float
    reasoning: str = ""
    text: str = ""


class WorkingIndicator:
    """Per session (``who``): thinking since when, and what streamed so far."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._lock = threading.Lock()
        self._thinking: dict[str, _Thinking] = {}
        self._spinners: dict[str, Spinner] = {}
        self._live: Live | None = None

    def start(self, who: str) -> None:
        with self._lock:
            self._thinking.setdefault(who, _Thinking(time.monotonic()))
        if self._live is None:
            live = Live(
                console=self.console, transient=True, refresh_per_second=8,
                redirect_stdout=False, redirect_stderr=False, get_renderable=self._view,
            )  # fmt: skip
            live.start()
            self._live = live

    def stream(self, who: str, reasoning: str = "", text: str = "") -> None:
        """A delta of the answer: shown dim under the spinner until the answer ends."""
        with self._lock:
            thinking = self._thinking.setdefault(who, _Thinking(time.monotonic()))
            thinking.reasoning += reasoning
            thinking.text += text
        if self._live is None:
            self.start(who)

    def stop(self, who: str) -> None:
        with self._lock:
            self._thinking.pop(who, None)
            idle = not self._thinking
        if idle:
            self.close()

    def close(self) -> None:
        """Erase the region and stop the refresh thread (idempotent)."""
        with self._lock:
            self._thinking.clear()
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def _view(self) -> RenderableType:
        with self._lock:
            snapshot = [(who, t.started, t.reasoning, t.text) for who, t in self._thinking.items()]
        now = time.monotonic()
        parts: list[RenderableType] = []
        for who, started, reasoning, text in snapshot:
            spinner = self._spinners.setdefault(who, Spinner("dots", style="magenta"))
            label = f"{who + ' ' if who else ''}thinking {now - started:.1f}s"
            spinner.text = Text(label, style="magenta")
            parts.append(spinner)
            for line in _tail(reasoning):
                parts.append(
                    Text("  " + line, style="dim italic", no_wrap=True, overflow="ellipsis")
                )
            for line in _tail(text):
                parts.append(Text("  " + line, no_wrap=True, overflow="ellipsis"))
        return Group(*parts)


def _tail(stream: str) -> list[str]:
    lines = [line for line in stream.splitlines() if line.strip()]
    return lines[-TAIL_LINES:]


__all__ = ["WorkingIndicator"]
