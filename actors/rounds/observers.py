"""Watching every tool round, whoever runs it (a ``generate()`` call, a session).

An observer is set for a block of code and the tasks it starts (a context
variable, so a session actor spawned inside the block inherits it), the way a
tracer wraps a span around each round without either user knowing of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from protocol.llm import ToolCall, ToolResult


class RoundObserver(Protocol):
    """Told when a round's calls start and when all their results are in (a round
    cut short by cancellation never ends: its host records what it cut)."""

    def round_started(self, calls: Sequence[ToolCall]) -> None: ...

    def round_ended(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> None: ...


_OBSERVERS: ContextVar[tuple[RoundObserver, ...]] = ContextVar("troupe_round_observers", default=())


def observers() -> tuple[RoundObserver, ...]:
    """The observers of the current context, innermost last."""
    return _OBSERVERS.get()


@contextmanager
def observe_rounds(observer: RoundObserver) -> Iterator[None]:
    """``with observe_rounds(o):`` every round run in this block, or in a task it
    starts, is told to ``o`` (with the observers already set)."""
    token = _OBSERVERS.set((*_OBSERVERS.get(), observer))
    try:
        yield
    finally:
        _OBSERVERS.reset(token)
