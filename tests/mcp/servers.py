"""Where the MCP servers the tests start come from: the SDK-built fixture (Python)
and the npm reference servers (installed by .ci/run into .npm-tools/)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from protocol.mcp import McpServerConfig, ToolCategory

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixture_server.py")
NPM_SERVERS = ROOT / ".npm-tools" / "node_modules" / "@modelcontextprotocol"


def fixture_server(
    name: str = "fx",
    env: dict[str, str] | None = None,
    categories: dict[str, ToolCategory] | None = None,
    path_arguments: dict[str, list[str]] | None = None,
) -> McpServerConfig:
    """The fixture over stdio."""
    return McpServerConfig(
        name,
        command=[sys.executable, str(FIXTURE)],
        env=env or {},
        categories=categories or {},
        path_arguments=path_arguments or {},
    )


def npm_server(package: str, *args: str) -> list[str]:
    """The command line of an npm reference server, or a skip saying why not."""
    entry = NPM_SERVERS / package / "dist" / "index.js"
    if not entry.is_file():
        pytest.skip(f"npm package @modelcontextprotocol/{package} is not installed (.ci/run)")
    return ["node", str(entry), *args]
