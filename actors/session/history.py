"""Turning a session's history into the messages of the next model request."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.llm import Message, TextPart, ToolCall
from protocol.session import (
    AssistantTurn,
    RewindTurn,
    SteeringTurn,
    SystemTurn,
    ToolResultsTurn,
    Turn,
    UserTurn,
)

REWOUND_HEADER = (
    "[Summary of a later part of this conversation, which the user rewound: the "
    "turns it stands for are no longer shown, and what they did may have been undone.]"
)


def to_messages(history: Sequence[Turn]) -> list[Message]:
    """User and steering turns become user messages (§2.6); assistant turns go back
    exactly as the provider sent them; each tool result is its own tool message."""
    messages: list[Message] = []
    for turn in history:
        match turn:
            case UserTurn() | SteeringTurn():
                messages.append(Message.user(turn.content))
            case SystemTurn():
                messages.append(Message.user(f"[system] {turn.content}"))
            case AssistantTurn():
                messages.append(turn.message or _assistant(turn.content, turn.tool_calls))
            case ToolResultsTurn():
                messages.extend(
                    Message("tool", [result], tool_call_id=result.tool_call_id)
                    for result in turn.results
                )
            case RewindTurn(summary=str(summary)):
                messages.append(Message.user(f"{REWOUND_HEADER}\n\n{summary}"))
            case _:
                pass
    return messages


class MessageLog:
    """The history as messages, converted once per turn as turns are added.

    Converting the whole history before every model call costs more each round;
    this keeps it to the turns added since the last call."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._converted = 0
        self._prompt_index: int | None = None

    def messages(self, history: Sequence[Turn]) -> list[Message]:
        if len(history) < self._converted:  # history was replaced: start over
            self._messages, self._converted, self._prompt_index = [], 0, None
        for turn in history[self._converted :]:
            if isinstance(turn, UserTurn):
                self._prompt_index = len(self._messages)
            self._messages.extend(to_messages((turn,)))
        self._converted = len(history)
        return self._messages

    def prompt_index(self) -> int:
        """Where the latest user prompt is among the messages (0 when there is none),
        as of the last :meth:`messages`."""
        return self._prompt_index or 0


def _assistant(text: str, calls: list[ToolCall]) -> Message:
    parts: list[TextPart | ToolCall] = [TextPart(text)] if text else []
    return Message("assistant", [*parts, *calls])


def history_chars(history: Sequence[Turn]) -> int:
    """Characters in the conversation, for the 4-characters-a-token estimate (§5.5)."""
    total = 0
    for turn in history:
        match turn:
            case UserTurn() | SteeringTurn() | SystemTurn():
                total += len(turn.content)
            case AssistantTurn():
                total += len(turn.content) + len(turn.reasoning or "")
                total += sum(len(call.raw_arguments) or 64 for call in turn.tool_calls)
            case ToolResultsTurn():
                total += sum(len(str(result.content)) for result in turn.results)
            case RewindTurn(summary=str(summary)):
                total += len(summary)
            case _:
                pass
    return total
