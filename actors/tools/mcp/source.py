"""The MCP servers of one session: started lazily (when the session's first input
arrives, since the model must see their tools on its first call), their tools
registered in the session's registry, shared by its subagents (a subagent's
registry is a copy holding the same tools, so the same connections), and stopped
with the session."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import trio

from actors.tools.mcp.connection import McpConnection, McpServerError
from actors.tools.mcp.tools import make_tool
from actors.tools.registry import ToolRegistry
from protocol.mcp import McpServerConfig

Warn = Callable[[str], object]


class McpTools:
    """Connections to a session's servers; :meth:`load` fills the registry once."""

    def __init__(self, servers: Sequence[McpServerConfig], nursery: trio.Nursery) -> None:
        self.connections = [McpConnection(server, nursery) for server in servers]
        self._loaded = False

    async def load(self, registry: ToolRegistry, warn: Warn) -> None:
        """Start every server at once and register its tools; a server that fails
        is reported through ``warn`` and left out (its next use tries again)."""
        if self._loaded:
            return

        async def load_one(connection: McpConnection) -> None:
            try:
                tools = await connection.tools()
            except McpServerError as error:
                warn(str(error))
                return
            for remote in tools:
                registry.register(make_tool(connection, remote))

        async with trio.open_nursery() as nursery:
            for connection in self.connections:
                nursery.start_soon(load_one, connection)
        self._loaded = True

    async def close(self) -> None:
        for connection in self.connections:
            await connection.close()
