"""What ACP requests carry, read into Troupe's terms: prompt content, the MCP
servers of ``session/new``, and the JSON-RPC error that refuses bad params."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.config import ConfigError, mcp_servers_for
from protocol.mcp import McpServerConfig

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700, -32600, -32601, -32602, -32603,
)  # fmt: skip


class AcpError(Exception):
    """A JSON-RPC error answer: its code and message go to the client."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def invalid_request(message: object) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 request, notification or response
    (JSON-RPC's -32600, answered with a null id), or None when it is one. The
    shapes are the official ACP SDK's: a response is anything without a method
    that carries an id, a result or an error (so a malformed answer is never
    answered back)."""
    if not isinstance(message, dict):
        return "not a JSON-RPC object (batches are not supported)"
    if "method" not in message:
        if message.keys() & {"id", "result", "error"}:
            return None
        return "neither a request, a notification nor a response"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(message["method"], str):
        return "method must be a string"
    if "id" in message and not _is_id(message["id"]):
        return "id must be a string, a number or null"
    return None


def _is_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int)


def prompt_text(blocks: list[Any]) -> str:
    """The text of a prompt's content blocks (resources inlined with their URI)."""
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            raise AcpError(INVALID_PARAMS, "prompt blocks must be objects")
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "resource":
            resource = block.get("resource") or {}
            parts.append(f"[{resource.get('uri', '')}]\n{resource.get('text', '')}")
        elif block.get("type") == "resource_link":
            parts.append(f"[{block.get('uri', '')}]")
        else:
            raise AcpError(INVALID_PARAMS, f"unsupported prompt content {block.get('type')!r}")
    return "\n".join(parts)


def mcp_server(entry: Any) -> McpServerConfig:
    """An MCP server as ACP's ``session/new`` passes it (stdio or http)."""
    if not isinstance(entry, dict):
        raise AcpError(INVALID_PARAMS, "mcpServers entries must be objects")
    headers = {h["name"]: h["value"] for h in entry.get("headers") or []}
    env = {e["name"]: e["value"] for e in entry.get("env") or []}
    if entry.get("type") in ("http", "sse") or "url" in entry:
        return McpServerConfig(entry["name"], url=entry["url"], headers=headers)
    return McpServerConfig(
        entry["name"], command=[entry["command"], *entry.get("args", [])], env=env
    )


async def session_servers(cwd: Path, from_editor: list[Any]) -> list[McpServerConfig]:
    """The config files' MCP servers for ``cwd`` (a stdio one without a ``cwd`` runs
    in the session's directory), then the editor's, which win by name."""
    try:
        configured = await trio.to_thread.run_sync(mcp_servers_for, cwd)
    except ConfigError as error:
        raise AcpError(INVALID_PARAMS, str(error)) from None
    by_name = {server.name: _in_directory(server, cwd) for server in configured}
    by_name.update((server.name, server) for server in map(mcp_server, from_editor))
    return list(by_name.values())


def _in_directory(server: McpServerConfig, cwd: Path) -> McpServerConfig:
    if server.cwd is not None or server.url is not None:
        return server
    return msgspec.structs.replace(server, cwd=str(cwd))
