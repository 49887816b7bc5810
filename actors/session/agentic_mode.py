"""Agentic mode on the one loop (agentic-behavior-tool.md 2-4, 7.2).

The model enters it with ``enter_agentic_mode``; from then on every model call is
an iteration: the state block (:mod:`actors.session.agentic_state`) is rebuilt
from the tracker and placed just before the latest user prompt of that request
only, the tracker follows what the tools really did (commands, their output's
end, exit code and directory; files written, edited or patched), and the loop ends
when the model calls ``complete(result, status)`` or the iterations run out.

:class:`AgenticMode` is the bookkeeping and the events; the loop asks it before
each model call and after each tool round.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from actors.session.agentic_state import AgenticState, state_block
from actors.session.events import EventHub
from actors.tools.registry import ToolRegistry
from actors.tools.tool import Tool
from protocol.events import AgenticEndEvent, AgenticIterationEvent, AgenticStartEvent
from protocol.llm import Message, ToolCall, ToolResult
from protocol.session import CompletionStatus

KEEP_GOING = (
    "You are still in agentic mode: continue toward the objective with tools, or call "
    "complete(result, status) if it is met or cannot be met."
)
"""Added when an agentic iteration answers without tool calls: no ``complete`` means
the agent intends to continue (2.3), and the next request needs a user turn."""

_STATUS_LINE = re.compile(
    r"\n?\[exit code: (?P<code>-?\d+|none|None)(?:, cwd: (?P<cwd>[^\]]*?))?, "
    r"duration: \d+ms\]\s*$"
)


def limit_message(iterations: int) -> str:
    return f"Stopped: iteration limit reached ({iterations} agentic iterations without complete)."


class Completion(msgspec.Struct, frozen=True):
    """``complete`` was called: what to show and with which status."""

    result: str
    status: CompletionStatus


def command_outcome(output: str) -> tuple[str, int | None, str | None]:
    """A shell or terminal result split into its output, exit code and working
    directory (the status line both tools end their output with)."""
    match = _STATUS_LINE.search(output)
    if match is None:
        return output, None, None
    code = match.group("code")
    exit_code = int(code) if code.lstrip("-").isdigit() else None
    return output[: match.start()], exit_code, match.group("cwd")


def with_state_block(messages: Sequence[Message], prompt_index: int, block: str) -> list[Message]:
    """The request's messages with the block as one user message just before the
    latest user prompt (``prompt_index``); the history itself is left untouched."""
    return [*messages[:prompt_index], Message.user(block), *messages[prompt_index:]]


class AgenticMode:
    """Whether the session is in agentic mode, and what the state block shows."""

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self.state: AgenticState | None = None
        self.iterations = 0

    @property
    def active(self) -> bool:
        return self.state is not None

    def leave(self) -> None:
        self.state, self.iterations = None, 0

    def limit_reached(self, max_iterations: int) -> bool:
        """Before a model call: are the iterations used up? (0: no limit.)"""
        return self.state is not None and 0 < max_iterations <= self.iterations

    def begin_iteration(self, max_iterations: int) -> str | None:
        """Before a model call: count the iteration and return the state block to
        place in this request (None outside agentic mode)."""
        if self.state is None:
            return None
        self.iterations += 1
        self.state = msgspec.structs.replace(
            self.state, iteration=self.iterations, max_iterations=max_iterations
        )
        self.hub.emit(AgenticIterationEvent(self.iterations, max_iterations))
        return state_block(self.state)

    def stop_at_limit(self, last_text: str) -> str:
        """The input ends at the limit with the model's last response and a clear
        note; agentic mode stays on in case the user extends the limit."""
        note = limit_message(self.iterations)
        shown = f"{last_text.rstrip()}\n\n{note}" if last_text.strip() else note
        self.hub.emit(AgenticEndEvent("iteration_limit", shown, self.iterations))
        return shown

    def after_round(
        self,
        calls: Sequence[ToolCall],
        results: Sequence[ToolResult],
        working_dir: str,
        terminal_open: bool,
        max_iterations: int,
        tools: ToolRegistry,
    ) -> Completion | None:
        """Enter agentic mode, follow the round's real results, and say whether
        ``complete`` ended the loop. What a call means here is its tool's declared
        ``agentic`` role (:data:`~actors.tools.tool.AgenticRole`), from ``tools``."""
        completion: Completion | None = None
        for call, result in zip(calls, results, strict=False):
            tool = tools.get(call.name)
            if tool is None:
                continue
            if result.is_error:
                self._track_failure(tool, call, result)
                continue
            if tool.agentic == "enters":
                self._enter(call.arguments, working_dir, max_iterations)
            elif tool.agentic == "completes" and completion is None:
                completion = Completion(
                    str(call.arguments.get("result", "")), call.arguments.get("status", "success")
                )
            else:
                self._track(tool, call, result, working_dir)
        if self.state is not None:
            self.state = msgspec.structs.replace(self.state, terminal_open=terminal_open)
        if completion is not None:
            self.hub.emit(AgenticEndEvent(completion.status, completion.result, self.iterations))
            self.leave()
        return completion

    def _enter(self, arguments: dict[str, Any], working_dir: str, max_iterations: int) -> None:
        user_prompt = str(arguments.get("user_prompt", ""))
        objective = str(arguments.get("objective", ""))
        if self.state is None:
            self.state = AgenticState(user_prompt, objective, max_iterations)
            self.iterations = 0
        else:  # entered again: a new framing of the same loop, the count goes on
            self.state = msgspec.structs.replace(
                self.state, user_prompt=user_prompt, objective=objective
            )
        self.hub.emit(AgenticStartEvent(user_prompt, objective, max_iterations))

    def _track(self, tool: Tool, call: ToolCall, result: ToolResult, working_dir: str) -> None:
        state = self.state
        if state is None:
            return
        arguments = call.arguments
        if tool.agentic == "runs_command" and arguments.get("command"):
            output, exit_code, cwd = command_outcome(_text(result))
            self.state = state.after_command(
                str(arguments["command"]), output, exit_code, cwd or working_dir
            )
        elif tool.agentic == "writes_files":
            for path in tool.written_paths(arguments):
                state = state.after_write(path)
            self.state = state

    def _track_failure(self, tool: Tool, call: ToolCall, result: ToolResult) -> None:
        """A command that failed still ran (or was refused): the block shows it."""
        state = self.state
        if state is None or tool.agentic != "runs_command" or not call.arguments.get("command"):
            return
        output, exit_code, cwd = command_outcome(_text(result))
        self.state = state.after_command(str(call.arguments["command"]), output, exit_code, cwd)


def _text(result: ToolResult) -> str:
    content = result.content
    return content if isinstance(content, str) else str(content)
