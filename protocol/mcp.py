"""MCP servers a session uses as a tool source: how each is declared.

A server is reached either by starting a command (stdio) or at a Streamable HTTP
URL. Its tools join the session's registry as ``<server>__<tool>``; each tool's
category (read / write / admin, what the safety policy decides on) comes from the
server's annotations unless the declaration overrides it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

ToolCategory = Literal["read", "write", "admin"]


class McpServerConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One MCP server: ``command`` (argv, stdio) or ``url`` (Streamable HTTP)."""

    name: str
    command: list[str] = []
    url: str | None = None
    headers: dict[str, str] = {}
    """HTTP headers sent with every request (authorization, for instance)."""
    env: dict[str, str] = {}
    """Extra environment variables of a stdio server (on top of a safe minimum)."""
    cwd: str | None = None
    category: ToolCategory | None = None
    """Overrides the category of every tool of this server."""
    categories: dict[str, ToolCategory] = {}
    """Overrides the category of single tools, by their name on the server."""
    path_arguments: dict[str, list[str]] = {}
    """Which arguments of single tools (by their name on the server) are paths: the
    policy resolves and judges them like a file tool's paths, and the server gets
    the resolved path. Nothing is guessed from an argument's name."""
    call_timeout: float = 600.0
    """Seconds one tool call may take before it fails with a typed error."""

    def __post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise ValueError(f"MCP server {self.name!r} needs exactly one of command or url")
        if not self.name or "__" in self.name:
            raise ValueError(f"MCP server name {self.name!r} must be non-empty without '__'")
