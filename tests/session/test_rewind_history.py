"""The conversation a rewind leaves, as a pure function of the stored turns: the
live log and one rebuilt from the stored turns (a resumed or replayed session)
give the model the same messages, compactions before and after the cut included."""

from __future__ import annotations

import msgspec
import pytest

from actors.session.context_view import ContextView
from actors.session.history import REWOUND_HEADER
from actors.session.rewind import NotAnInput, fork_point, input_index
from actors.session.turns import TurnLog, conversation
from protocol.llm import ToolCall, ToolResult, Usage
from protocol.session import (
    AssistantTurn,
    CompactionTurn,
    RewindTurn,
    ToolResultsTurn,
    Turn,
    UserTurn,
)


def answer(text: str, seq: int, calls: list[ToolCall] | None = None) -> AssistantTurn:
    return AssistantTurn(text, calls or [], None, Usage(), None, 0.0, seq=seq)


def round_trip(log: TurnLog) -> TurnLog:
    """As the store gives it back: every turn, encoded and decoded."""
    blobs = [msgspec.json.encode(turn) for turn in log.raw]
    return TurnLog(msgspec.json.decode(blob, type=Turn) for blob in blobs)


def texts(view: ContextView, log: TurnLog) -> list[str]:
    return [message.text for message in view.messages(log)]


def test_a_cut_with_more_turns_after_it_than_before_is_rebuilt_not_appended() -> None:
    log = TurnLog([UserTurn("one", 0.0, 1), answer("first", 2), UserTurn("two", 0.0, 3),
                   answer("second", 4)])  # fmt: skip
    view = ContextView()
    assert texts(view, log) == ["one", "first", "two", "second"]
    log.append(RewindTurn(input_index(log, 3), 3, 0.0))
    for turn in (UserTurn("other", 0.0, 6), answer("third", 7), UserTurn("more", 0.0, 8)):
        log.append(turn)  # longer than what the view converted before the cut
    assert texts(view, log) == ["one", "first", "other", "third", "more"]
    assert texts(ContextView(), round_trip(log)) == texts(view, log)
    assert len(log.raw) == 8 and log.cuts == 1


def test_a_cut_before_a_compaction_brings_the_turns_back_verbatim() -> None:
    turns: list[Turn] = [UserTurn("goal", 0.0, 1), answer("a1", 2), UserTurn("u2", 0.0, 3),
                         answer("a2", 4), UserTurn("u3", 0.0, 5), answer("a3", 6)]  # fmt: skip
    log = TurnLog(turns)
    log.append(CompactionTurn("the summary", 1, 4, 0, 100, 10, 0.0, pinned=[2]))
    assert any("the summary" in t for t in texts(ContextView(), log))
    log.append(RewindTurn(input_index(log, 5), 5, 0.0))
    assert texts(ContextView(), log) == ["goal", "a1", "u2", "a2"]
    assert texts(ContextView(), round_trip(log)) == ["goal", "a1", "u2", "a2"]


def test_summarize_from_here_keeps_the_summary_in_place_of_the_cut() -> None:
    log = TurnLog([UserTurn("one", 0.0, 1), answer("first", 2), UserTurn("two", 0.0, 3),
                   answer("second", 4)])  # fmt: skip
    log.append(RewindTurn(2, 3, 0.0, summary="they talked about two"))
    log.append(UserTurn("next", 0.0, 7))
    shown = texts(ContextView(), round_trip(log))
    assert shown[:2] == ["one", "first"] and shown[-1] == "next"
    assert shown[2].startswith(REWOUND_HEADER) and shown[2].endswith("they talked about two")
    assert conversation(log.raw)[2] == log[2]


def test_rewinding_to_what_is_no_input_is_refused() -> None:
    log = TurnLog([UserTurn("one", 0.0, 1), answer("first", 2)])
    for seq in (2, 0, -1, 99):
        with pytest.raises(NotAnInput):
            input_index(log, seq)
    old = TurnLog([UserTurn("from before seqs were kept", 0.0)])
    with pytest.raises(NotAnInput):
        input_index(old, 0)


def test_a_fork_point_keeps_an_answers_tool_results() -> None:
    call = ToolCall("c1", "shell", {"command": "ls"}, '{"command": "ls"}')
    history: list[Turn] = [
        UserTurn("one", 0.0, 1), answer("", 2, [call]),
        ToolResultsTurn([ToolResult("c1", "a.txt", False, "shell")], 0.0),
        answer("done", 5), UserTurn("two", 0.0, 6), answer("again", 7),
    ]  # fmt: skip
    assert fork_point(history, 2) == 3  # the call's results come along
    assert fork_point(history, 5) == 4
    assert fork_point(history, 6) == 4  # a user input: just before it
    assert fork_point(history, None) == 6
    with pytest.raises(NotAnInput):
        fork_point(history, 3)
