"""MCP tools as registry tools: namespaced names, schemas passed through, a
category for the policy, and results turned into the text the model reads."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import msgspec
from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp.types import Tool as McpTool

from actors.tools.core.context import ToolContext
from actors.tools.mcp.connection import McpConnection
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool, ToolFailure, ToolOutput
from environments.images import sniff_image
from protocol.llm import ImagePart
from protocol.mcp import McpServerConfig, ToolCategory

NAME_LIMIT = 64
"""The longest tool name every provider accepts (OpenAI: ^[a-zA-Z0-9_-]{1,64}$)."""
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """``server__tool``, with characters the providers refuse replaced by ``_``."""
    return _UNSAFE.sub("_", f"{server}__{tool}")[:NAME_LIMIT]


def category_of(config: McpServerConfig, tool: McpTool) -> ToolCategory:
    """Configuration first, then the server's hints; an unannotated tool is a write
    (the MCP spec's defaults: not read-only, possibly destructive, but the
    destructive default only counts for tools that declare they change things)."""
    if tool.name in config.categories:
        return config.categories[tool.name]
    if config.category is not None:
        return config.category
    hints = tool.annotations
    if hints is not None and hints.read_only_hint:
        return "read"
    if hints is not None and hints.destructive_hint:
        return "admin"
    return "write"


def input_schema(tool: McpTool) -> dict[str, Any]:
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def render_result(result: CallToolResult) -> str | ToolOutput:
    """The text the model reads: text blocks as they are, other blocks described,
    structured content as JSON when no text carries it; image blocks also as the
    pictures themselves (the session shows them to a model that takes images, and
    caps their size). Error results raise."""
    parts = [_render_block(block) for block in result.content]
    if result.structured_content is not None and not any(
        isinstance(block, TextContent) for block in result.content
    ):
        parts.append(msgspec.json.encode(result.structured_content).decode())
    text = "\n".join(parts)
    if result.is_error:
        raise ToolFailure(text or "The MCP tool reported an error without a message.")
    images = tuple(
        image
        for block in result.content
        if isinstance(block, ImageContent) and (image := _picture(block)) is not None
    )
    return ToolOutput(text, images) if images else text


def _picture(block: ImageContent) -> ImagePart | None:
    """The image a block holds, when its bytes are one (the server's word for the
    type is not taken: the header decides, as for read_file)."""
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return None
    found = sniff_image(data)
    return None if found is None else ImagePart(data=data, media_type=found.media_type)


def _render_block(block: object) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        size = _decoded_size(block.data)
        if _picture(block) is None:
            return f"[image {block.mime_type}, {size} bytes: not a PNG, JPEG, GIF or WebP image]"
        return f"[image {block.mime_type}, {size} bytes]"
    if isinstance(block, AudioContent):
        return f"[audio {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, ResourceLink):
        return f"[resource {block.uri}" + (f": {block.description}]" if block.description else "]")
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        return f"[resource {resource.uri}, {resource.mime_type or 'binary'}]"
    return f"[{type(block).__name__}]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return len(data)


def make_tool(connection: McpConnection, remote: McpTool) -> Tool:
    """One registry tool that calls ``remote`` on ``connection``."""
    config = connection.config

    paths = tuple(config.path_arguments.get(remote.name, ()))

    async def execute(arguments: dict[str, Any], context: ToolContext) -> str | ToolOutput:
        if paths:  # declared paths become the resolved paths the policy judged
            arguments = {
                name: _resolved(context, value) if name in paths else value
                for name, value in arguments.items()
            }
        return render_result(await connection.call(remote.name, arguments))

    description = remote.description or remote.title or f"{remote.name} (MCP server {config.name})"
    return Tool(
        name=tool_name(config.name, remote.name),
        description=description,
        execute=execute,
        json_schema=input_schema(remote),
        category=category_of(config, remote),
        paths=PathDeclaration(paths),
    )


def _resolved(context: ToolContext, value: Any) -> Any:
    if isinstance(value, str) and value:
        return context.path(value)
    if isinstance(value, list):
        return [_resolved(context, item) for item in value]
    return value
