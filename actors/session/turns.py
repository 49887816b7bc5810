"""A session's conversation as an append-only log of turns.

Turns are only ever appended, and each one is handed to the log's sinks as it is
added, so a durable store can keep exactly what the session holds (no snapshot
taken later, which a crash could forestall). A sink must be quick and must not
raise: like an event hub's sinks, it queues the turn for a writer.

A conversation rewind is a turn too (:class:`~protocol.session.RewindTurn`): the
log keeps every turn (:attr:`TurnLog.raw`, what is stored, so the cut turns stay
for audit), and reads as the conversation with the rewinds applied, a pure
function of the turns, so a resumed or replayed session rebuilds exactly the cut
conversation. Indices (compactions' ranges, a rewind's ``keep``) are indices of
that conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

from protocol.session import RewindTurn, Turn

TurnSink = Callable[[int, Turn], None]
"""Called with each new turn's index in the stored log, and the turn."""


class TurnLog(Sequence[Turn]):
    """The conversation: read like a list, grown only by :meth:`append`."""

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self._raw: list[Turn] = []
        self._turns: list[Turn] = []
        self._sinks: list[TurnSink] = []
        self.cuts = 0
        """Rewinds applied so far: a reader that converts the conversation
        incrementally starts over when this changes."""
        for turn in turns:
            self._take(turn)

    @property
    def raw(self) -> Sequence[Turn]:
        """Every turn ever appended, rewound ones and the rewinds included (what the
        store holds; what was spent)."""
        return self._raw

    def add_sink(self, sink: TurnSink) -> None:
        """Hand every turn appended from now on to ``sink``."""
        self._sinks.append(sink)

    def append(self, turn: Turn) -> None:
        index = len(self._raw)
        self._take(turn)
        for sink in self._sinks:
            sink(index, turn)

    def _take(self, turn: Turn) -> None:
        self._raw.append(turn)
        if isinstance(turn, RewindTurn):
            del self._turns[max(turn.keep, 0) :]
            if turn.summary is not None:
                self._turns.append(turn)
            self.cuts += 1
        else:
            self._turns.append(turn)

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


def conversation(turns: Iterable[Turn]) -> list[Turn]:
    """The conversation a stored log of turns holds (its rewinds applied)."""
    return list(TurnLog(turns))
