"""What the model sees of a compacted conversation: the history as messages.

The history is append-only (:mod:`actors.session.turns`); a compaction is a
:class:`~protocol.session.CompactionTurn` appended to it, never an edit. The view
is a pure function of the turns, so a session resumed from the store, or a
replay, rebuilds byte for byte the messages the model was sent, without asking
the model for the summary again:

- the turns up to the first user input, verbatim;
- the latest summary, as a user message, standing for its range, then that
  range's pinned turns (the latest user input), verbatim;
- every turn after the range, verbatim, except that tool outputs of turns before
  the latest pruning mark are one-line stubs naming what was elided.

The view is converted incrementally, like :class:`~actors.session.history.MessageLog`
(which it replaces for the loop): only a new compaction makes it start over, so
the rounds between compactions cost what they did without compaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.session.history import history_chars, to_messages
from protocol.llm import Message, ToolCall, ToolResult
from protocol.session import (
    AssistantTurn,
    CompactionTurn,
    ToolResultsTurn,
    Turn,
    UserTurn,
)

SUMMARY_HEADER = (
    "[Summary of the earlier part of this conversation, written when it was compacted "
    "to fit the context window. The turns it replaces are no longer shown.]"
)
STUB_MIN_CHARS = 200
"""Tool outputs shorter than this are kept when pruning: a stub would save little."""


def summary_message(summary: str) -> Message:
    return Message.user(f"{SUMMARY_HEADER}\n\n{summary}")


def stub(result: ToolResult, call: ToolCall | None) -> ToolResult:
    """The one line that stands for a pruned tool output: which call, how big."""
    size = len(str(result.content))
    name = result.name or (call.name if call else "tool")
    arguments = (call.raw_arguments if call else "")[:120].replace("\n", " ")
    what = f"{name} {arguments}".strip()
    text = f"[output elided to save context: {what} ({size:,} characters); call it again if needed]"
    return ToolResult(result.tool_call_id, text, result.is_error, result.name)


def first_input_end(history: Sequence[Turn]) -> int:
    """The index just after the first user input (0 when there is none)."""
    for index, turn in enumerate(history):
        if isinstance(turn, UserTurn):
            return index + 1
    return 0


class ContextView:
    """The messages of the next request, kept up to date as turns are appended."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._converted = 0
        self._prompt_index: int | None = None
        self.chars = 0
        """Characters of the turns as shown (stubs and summary, not what they replace)."""
        self.prune_mark = 0
        self.summary: CompactionTurn | None = None
        self.generation = 0
        """Counts the rebuilds: estimates made before one no longer hold."""
        self.images = 0
        """Tool results shown with images: a request for a model that takes none is
        rewritten only when there are some, not scanned every round."""
        self._cuts = 0

    def messages(self, history: Sequence[Turn]) -> list[Message]:
        cuts = getattr(history, "cuts", 0)  # a rewind (TurnLog) changed turns seen before
        new = history[self._converted :]
        if (
            cuts != self._cuts
            or len(history) < self._converted
            or any(isinstance(t, CompactionTurn) for t in new)
        ):
            self._cuts = cuts
            self._rebuild(history)
            return self._messages
        for turn in new:
            self._add(turn, len(self._messages))
        self._converted = len(history)
        return self._messages

    def prompt_index(self) -> int:
        """Where the latest user prompt is among the messages (0 when there is none)."""
        return self._prompt_index or 0

    def _add(self, turn: Turn, at: int) -> None:
        if isinstance(turn, UserTurn):
            self._prompt_index = at
        self._messages.extend(to_messages((turn,)))
        self.chars += history_chars((turn,))
        if isinstance(turn, ToolResultsTurn):
            self.images += sum(1 for result in turn.results if result.images)

    def _rebuild(self, history: Sequence[Turn]) -> None:
        self._messages, self._prompt_index, self.chars, self.images = [], None, 0, 0
        self.summary, self.prune_mark = None, 0
        self.generation += 1
        for turn in history:
            if isinstance(turn, CompactionTurn):
                self.prune_mark = max(self.prune_mark, turn.pruned_before)
                if turn.summary is not None:
                    self.summary = turn
        for index, turn in shown_turns(history, self.summary, self.prune_mark):
            if index >= 0:
                self._add(turn, len(self._messages))
            elif isinstance(turn, UserTurn):  # the summary
                self._messages.append(summary_message(turn.content))
                self.chars += len(turn.content)
        self._converted = len(history)


def shown_turns(
    history: Sequence[Turn], summary: CompactionTurn | None, prune_mark: int
) -> list[tuple[int, Turn]]:
    """(history index, turn as shown) in the order the model sees them; the summary
    comes as a UserTurn at index -1. Compaction turns themselves are not shown."""
    calls: dict[str, ToolCall] = {}
    shown: list[tuple[int, Turn]] = []

    def show(index: int) -> None:
        turn = history[index]
        if isinstance(turn, CompactionTurn):
            return
        if isinstance(turn, AssistantTurn) and index < prune_mark:
            calls.update((call.id, call) for call in turn.tool_calls)
        if isinstance(turn, ToolResultsTurn) and index < prune_mark:
            turn = ToolResultsTurn(
                [
                    r
                    if len(str(r.content)) < STUB_MIN_CHARS
                    else stub(r, calls.get(r.tool_call_id))
                    for r in turn.results
                ],
                turn.timestamp,
            )
        shown.append((index, turn))

    if summary is None:
        for index in range(len(history)):
            show(index)
        return shown
    for index in range(min(summary.start, len(history))):
        show(index)
    for index in range(summary.start, min(summary.end, len(history))):
        turn = history[index]
        if isinstance(turn, AssistantTurn) and index < prune_mark:  # stubs after may name them
            calls.update((call.id, call) for call in turn.tool_calls)
    shown.append((-1, UserTurn(summary.summary or "", summary.timestamp)))
    for index in summary.pinned:
        if 0 <= index < len(history):
            show(index)
    for index in range(summary.end, len(history)):
        show(index)
    return shown
