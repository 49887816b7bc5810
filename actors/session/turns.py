"""A session's conversation as an append-only log of turns.

Turns are only ever appended, and each one is handed to the log's sinks as it is
added, so a durable store can keep exactly what the session holds (no snapshot
taken later, which a crash could forestall). A sink must be quick and must not
raise: like an event hub's sinks, it queues the turn for a writer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

from protocol.session import Turn

TurnSink = Callable[[int, Turn], None]
"""Called with each new turn's index in the conversation, and the turn."""


class TurnLog(Sequence[Turn]):
    """The conversation: read like a list, grown only by :meth:`append`."""

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self._turns: list[Turn] = list(turns)
        self._sinks: list[TurnSink] = []

    def add_sink(self, sink: TurnSink) -> None:
        """Hand every turn appended from now on to ``sink``."""
        self._sinks.append(sink)

    def append(self, turn: Turn) -> None:
        index = len(self._turns)
        self._turns.append(turn)
        for sink in self._sinks:
            sink(index, turn)

    def __len__(self) -> int:
        return len(self._turns)

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> list[Turn]: ...

    def __getitem__(self, index: int | slice) -> Turn | list[Turn]:
        return self._turns[index]

    def __iter__(self) -> Iterator[Turn]:
        return iter(self._turns)
