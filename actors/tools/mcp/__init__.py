"""MCP servers as a tool source for a session's registry (see :mod:`.source`)."""

from actors.tools.mcp.connection import McpConnection, McpServerCrashed, McpServerError
from actors.tools.mcp.source import McpTools
from actors.tools.mcp.tools import category_of, render_result, tool_name

__all__ = [
    "McpConnection",
    "McpServerCrashed",
    "McpServerError",
    "McpTools",
    "category_of",
    "render_result",
    "tool_name",
]
