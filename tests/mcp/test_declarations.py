"""Declaring MCP servers: the README's example as written, names, categories, and
clear errors for declarations that cannot work."""

from __future__ import annotations

import re

import msgspec
import pytest
from mcp.types import Tool as McpTool
from mcp.types import ToolAnnotations

from actors.tools.mcp import category_of, tool_name
from protocol.mcp import McpServerConfig
from protocol.session import SessionConfig
from tests.mcp.servers import ROOT


def test_readme_example_declares_servers():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### MCP servers", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    scope: dict[str, object] = {}
    exec(match.group(1), scope)
    config = scope["config"]
    assert isinstance(config, SessionConfig)
    assert [server.name for server in config.mcp_servers] == ["files", "search"]
    wire = msgspec.json.decode(msgspec.json.encode(config), type=SessionConfig)
    assert wire == config


@pytest.mark.parametrize(
    "declaration",
    [
        {"name": "both", "command": ["x"], "url": "http://h/mcp"},
        {"name": "neither"},
        {"name": "a__b", "command": ["x"]},
        {"name": "typo", "command": ["x"], "comand": ["y"]},
        {"name": "bad", "command": ["x"], "category": "root"},
    ],
)
def test_bad_declarations_are_typed_errors(declaration: dict[str, object]):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(declaration, McpServerConfig)


def test_names_fit_every_provider():
    assert tool_name("every", "get-sum") == "every__get-sum"
    assert tool_name("s", "a.b/c d") == "s__a_b_c_d"
    assert len(tool_name("s", "x" * 100)) == 64


def test_categories_from_annotations_then_configuration():
    server = McpServerConfig("s", command=["x"], categories={"b": "read"})

    def tool(name: str, read_only_hint: bool = False, destructive_hint: bool = False) -> McpTool:
        hints = ToolAnnotations(read_only_hint=read_only_hint, destructive_hint=destructive_hint)
        return McpTool(name=name, input_schema={"type": "object"}, annotations=hints)

    assert category_of(server, tool("a", read_only_hint=True)) == "read"
    assert category_of(server, tool("a", destructive_hint=True)) == "admin"
    assert category_of(server, tool("a")) == "write"
    assert category_of(server, tool("b", destructive_hint=True)) == "read"
    everything_admin = McpServerConfig("s", command=["x"], category="admin")
    assert category_of(everything_admin, tool("a", read_only_hint=True)) == "admin"
