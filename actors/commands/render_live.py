"""The working indicator: a spinner while a model thinks or a command runs.

While a model call runs, the bottom of the terminal shows one spinner line per
thinking session (``thinking 2.4s``) and, dim under it, the last lines of the
reasoning and text streaming in. While a tool runs, a spinner line names the
call and its time (``running shell(make test) 12.3s``) with the last lines of
the command's output, dim, as they come. The region is transient: when the
answer is complete or the command ends it disappears and the renderer prints
the answer or the result for good above it. Streamed text is shown through
:func:`~actors.commands.visible.visible`.

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

from actors.commands.visible import visible

TAIL_LINES = 3
"""How many lines of the streaming reasoning/text the indicator shows."""


OUTPUT_KEPT = 16_384
"""Characters of a command's output kept for its tail (the rest is in the result)."""


@dataclass
class _Thinking:
    started: float
    reasoning: str = ""
    text: str = ""
    label: str = ""
    """Empty while a model thinks; the call in words while a tool runs."""
    output: str = ""


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

    def run_tool(self, key: str, label: str) -> None:
        """A tool call started (``key`` names it): a spinner with its label and time."""
        with self._lock:
            entry = self._thinking.setdefault(key, _Thinking(time.monotonic()))
            entry.label = label
        if self._live is None:
            self.start(key)

    def output(self, key: str, label: str, text: str) -> None:
        """Output of a running command: its last lines show dim under its spinner."""
        with self._lock:
            entry = self._thinking.setdefault(key, _Thinking(time.monotonic(), label=label))
            entry.output = (entry.output + text)[-OUTPUT_KEPT:]
        if self._live is None:
            self.start(key)

    def stop_all(self, prefix: str) -> None:
        """Stop every spinner whose key starts with ``prefix`` (a session's)."""
        with self._lock:
            for key in [key for key in self._thinking if key.startswith(prefix)]:
                del self._thinking[key]
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
            snapshot = [
                (key, t.started, t.reasoning, t.text, t.label, t.output)
                for key, t in self._thinking.items()
            ]
        now = time.monotonic()
        parts: list[RenderableType] = []
        for key, started, reasoning, text, label, output in snapshot:
            who = key.split("\0", 1)[0]
            spinner = self._spinners.setdefault(key, Spinner("dots", style="magenta"))
            doing = f"running {label}" if label else "thinking"
            words = f"{who + ' ' if who else ''}{doing} {now - started:.1f}s"
            spinner.text = Text(words, style="cyan" if label else "magenta")
            parts.append(spinner)
            for line in _tail(reasoning):
                parts.append(
                    Text("  " + line, style="dim italic", no_wrap=True, overflow="ellipsis")
                )
            for line in _tail(text):
                parts.append(Text("  " + line, no_wrap=True, overflow="ellipsis"))
            for line in _tail(output, TAIL_LINES + 2):
                parts.append(Text("  │ " + line, style="dim", no_wrap=True, overflow="ellipsis"))
        return Group(*parts)


def _tail(stream: str, count: int = TAIL_LINES) -> list[str]:
    """The last ``count`` non-blank lines, made visible (``splitlines`` also splits
    at a carriage return, so a progress bar's updates are lines of their own)."""
    lines = [line for line in stream.splitlines() if line.strip()]
    return [visible(line, keep="\t") for line in lines[-count:]]


__all__ = ["WorkingIndicator"]
