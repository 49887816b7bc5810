"""The tools a session adds to its profile's own (subagents, loop breakers, agentic
mode, the terminal), added so that none silently takes the place of a custom tool
of the same name that the profile was given.

A profile's registry is the embedder's: a tool it registered as ``wait`` or
``spawn_agent`` is theirs, and replacing it with the subagent tool would make the
model call something other than what its description promised, with no word
said. So such a session is refused when it is made (:class:`ToolNameConflict`),
and a session that does not offer one of its tools (a subagent at the depth
limit) withdraws only its own, never a custom tool of that name.
"""

from __future__ import annotations

from collections.abc import Iterable

from actors.kernel import Rejection
from actors.tools.registry import Tool, ToolRegistry


class ToolNameConflict(Rejection):
    """A custom tool has the name of a tool the session itself offers."""

    code = "invalid_request"


def offer(registry: ToolRegistry, tools: Iterable[Tool], what: str) -> None:
    """Register the session's ``tools``; a custom tool of the same name is a
    :class:`ToolNameConflict` (``what`` says which of the session's tools)."""
    for tool in tools:
        present = registry.get(tool.name)
        if present is not None and present is not tool:
            raise ToolNameConflict(
                f"the profile's tool {tool.name!r} has the name of a {what} tool the session "
                f"offers; rename the custom tool (or turn the {what} tools off)"
            )
        registry.register(tool)


def withdraw(registry: ToolRegistry, tools: Iterable[Tool]) -> None:
    """Unregister the session's own ``tools`` (a custom tool of the name stays)."""
    for tool in tools:
        if registry.get(tool.name) is tool:
            registry.unregister(tool.name)
