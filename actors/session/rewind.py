"""Finding where a rewind or a fork cuts the conversation.

User inputs and model answers carry the seq of their event
(:class:`~protocol.session.UserTurn` ``seq``, :class:`~protocol.session.AssistantTurn`
``seq``), so a client names them by what it was shown. The cut itself is a
:class:`~protocol.session.RewindTurn` (see :class:`actors.session.turns.TurnLog`)."""

from __future__ import annotations

from collections.abc import Sequence

from actors.kernel import Rejection
from protocol.session import AssistantTurn, ToolResultsTurn, Turn, UserTurn


class NotAnInput(Rejection):
    """The seq names no user input (or message) of the session's conversation."""

    code = "invalid_request"


class RewindCancelled(Rejection):
    """The session was stopped while a rewind's summary was being written."""

    code = "invalid_request"


class SummaryFailed(Rejection):
    """The model could not write a rewind's summary: nothing was rewound."""

    code = "summary_failed"


class RewindBusy(Rejection):
    """A rewind while the session processes an input: interrupt it first."""

    code = "session_busy"


def input_index(history: Sequence[Turn], seq: int) -> int:
    """Where the user input of event ``seq`` is in ``history``."""
    for index, turn in enumerate(history):
        if isinstance(turn, UserTurn) and turn.seq == seq and seq > 0:
            return index
    raise NotAnInput(f"event {seq} is not a user input of this session's conversation")


def input_text(history: Sequence[Turn], seq: int) -> str:
    """The text of the user input of event ``seq`` in ``history``."""
    turn = history[input_index(history, seq)]
    assert isinstance(turn, UserTurn)
    return turn.content


def fork_point(history: Sequence[Turn], seq: int | None) -> int:
    """How many turns of ``history`` a fork at event ``seq`` keeps: everything
    before a user input (the fork starts just before it, to send it or another
    one), everything up to and with an assistant message (and its tool results:
    a conversation never ends in unanswered calls). None: all of it."""
    if seq is None:
        return len(history)
    for index, turn in enumerate(history):
        if seq <= 0:
            break
        if isinstance(turn, UserTurn) and turn.seq == seq:
            return index
        if isinstance(turn, AssistantTurn) and turn.seq == seq:
            after = index + 1
            if after < len(history) and isinstance(history[after], ToolResultsTurn):
                after += 1
            return after
    raise NotAnInput(
        f"event {seq} is not a user input or assistant message of this session's conversation"
    )
