"""The tool registry, and running one of the model's tool calls.

Whatever goes wrong with a call (an unknown tool, arguments that are not JSON or do
not fit, the tool raising) becomes an error result the model can read and react
to; it never ends the loop. A whole round of calls is the session's job
(:mod:`actors.session.tool_round`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import msgspec

from actors.tools.paths import Clearance
from actors.tools.schema import InvalidArguments
from actors.tools.tool import Executor, Tool
from protocol.llm import ImagePart, ToolCall, ToolDefinition

T = TypeVar("T")

__all__ = ["Executor", "Gate", "Tool", "ToolFailure", "ToolOutcome", "ToolOutput", "ToolRegistry"]

Gate = Callable[[Tool, ToolCall], Awaitable["str | Clearance | None"]]
"""``await gate(tool, call) -> refusal``: the policy's check between validation and
execution; a refusal (the text the model reads) replaces running the tool. A
:class:`Clearance` lets it run with the resolved paths (the context must then be a
dataclass with a ``clearance`` field)."""


class ToolFailure(Exception):
    """Raised by a tool whose error text must reach the model exactly as written
    (apply_patch's messages, for instance), without the generic prefix."""


class ToolOutput(msgspec.Struct, frozen=True):
    """What a tool returns when it has pictures as well as text (a tool returning
    only text returns the ``str``)."""

    text: str
    images: tuple[ImagePart, ...] = ()


class ToolOutcome(msgspec.Struct, frozen=True):
    """The full, untruncated output of one call (truncation is the session's job)."""

    call_id: str
    name: str
    output: str
    is_error: bool
    images: tuple[ImagePart, ...] = ()


class ToolRegistry:
    """Tools by name; registering a name again replaces the earlier tool."""

    def __init__(self, tools: Sequence[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def copy(self) -> ToolRegistry:
        return ToolRegistry(list(self._tools.values()))

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self) -> list[ToolDefinition]:
        return [tool.definition() for tool in self._tools.values()]

    async def run(self, call: ToolCall, context: Any, gate: Gate | None = None) -> ToolOutcome:
        """Run one call; every failure comes back as an error outcome. ``gate``
        (the session's policy) judges a valid call before it runs."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            unreadable = f" The call could not be read: {call.arguments_error}" * bool(
                call.arguments_error
            )
            return _error(call, f"Unknown tool: {call.name}. Available tools: {known}.{unreadable}")
        if call.arguments_error:
            return _error(call, f"Invalid arguments for {call.name}: {call.arguments_error}")
        try:
            arguments = tool.parse(call.arguments)
        except InvalidArguments as exc:
            return _error(call, f"Invalid arguments for {call.name}: {exc}")
        if gate is not None:
            verdict = await gate(tool, call)
            if isinstance(verdict, str):
                return _error(call, verdict)
            if verdict is not None:
                context = msgspec.structs.replace(context, clearance=verdict)
        try:
            output = await tool.execute(arguments, context)
        except ToolFailure as failure:
            return _error(call, str(failure))
        except Exception as exc:  # a tool's failure is a result for the model
            return _error(call, f"Tool error ({call.name}): {exc}")
        if isinstance(output, ToolOutput):
            return ToolOutcome(call.id, call.name, output.text, False, output.images)
        return ToolOutcome(call.id, call.name, output, False)


def _error(call: ToolCall, message: str) -> ToolOutcome:
    return ToolOutcome(call.id, call.name, message, True)
