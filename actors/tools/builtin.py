"""Troupe's own tools, each once: the registration a new built-in tool adds itself to.

Sessions get their tools from their profile (:mod:`actors.session.profiles`) and
what the session offers besides (subagents, agentic mode, the terminal); this
catalogue is for those that know a call only by its name, from an event or a
configuration (a host showing a stored session, a hook matcher, a test), and read
the tool's facts here. A custom or MCP tool is not in it: its facts travel with
the registry it was registered in, and in the events (``tool_kind``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from actors.tools.core.agentic import AGENTIC_TOOLS
from actors.tools.core.agents import AGENT_TOOLS
from actors.tools.core.edit import EDIT_FILE
from actors.tools.core.files import LIST_DIR, READ_FILE, READ_MANY_FILES, WRITE_FILE
from actors.tools.core.loop_breakers import LOOP_BREAKING_TOOLS
from actors.tools.core.patch import APPLY_PATCH
from actors.tools.core.plan import UPDATE_PLAN
from actors.tools.core.search import GLOB, GREP
from actors.tools.core.shell import shell_tool
from actors.tools.core.terminal import TERMINAL
from actors.tools.tool import Tool
from protocol.environment import DEFAULT_TIMEOUT_MS

BUILTIN_TOOLS: Mapping[str, Tool] = MappingProxyType(
    {
        tool.name: tool
        for tool in (
            READ_FILE,
            READ_MANY_FILES,
            WRITE_FILE,
            EDIT_FILE,
            APPLY_PATCH,
            LIST_DIR,
            GREP,
            GLOB,
            shell_tool(DEFAULT_TIMEOUT_MS),
            TERMINAL,
            UPDATE_PLAN,
            *AGENT_TOOLS,
            *LOOP_BREAKING_TOOLS,
            *AGENTIC_TOOLS,
        )
    }
)
"""Every built-in tool by its name (read-only)."""


def builtin_tool(name: str) -> Tool | None:
    """Troupe's own tool of that name, or None (a custom or MCP tool, or no tool)."""
    return BUILTIN_TOOLS.get(name)
