"""grep and glob."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool
from actors.tools.tool import OutputLimits
from protocol.environment import DEFAULT_MAX_RESULTS, Glob, Grep


class GrepParams(msgspec.Struct, frozen=True):
    pattern: Annotated[str, msgspec.Meta(description="Regular expression to search for")]
    path: Annotated[str | None, msgspec.Meta(description="Directory or file to search")] = None
    glob_filter: Annotated[
        str | None, msgspec.Meta(description="Only files matching this glob, e.g. '*.py'")
    ] = None
    case_insensitive: bool = False
    max_results: Annotated[int, msgspec.Meta(description="Maximum matching lines")] = (
        DEFAULT_MAX_RESULTS
    )


async def grep(arguments: GrepParams, context: ToolContext) -> str:
    found = await context.environment.ask(
        Grep(
            arguments.pattern,
            context.path(arguments.path or "."),
            arguments.glob_filter,
            arguments.case_insensitive,
            arguments.max_results,
        )
    )
    if not found.matches:
        return "No matches found."
    more = f"\n[results limited to {arguments.max_results} matches]" if found.truncated else ""
    return found.text + more


class GlobParams(msgspec.Struct, frozen=True):
    pattern: Annotated[str, msgspec.Meta(description="Glob pattern, e.g. '**/*.ts'")]
    path: Annotated[str | None, msgspec.Meta(description="Base directory")] = None


async def glob(arguments: GlobParams, context: ToolContext) -> str:
    found = await context.environment.ask(
        Glob(arguments.pattern, context.path(arguments.path or "."))
    )
    return "\n".join(found.paths) if found.paths else "No files found."


GREP = Tool(
    "grep",
    "Search file contents with a regular expression. Returns 'path:line:text' matches.",
    grep,
    GrepParams,
    category="read",
    paths=PathDeclaration(("path",), defaults={"path": "."}),
    kind="search",
    limits=OutputLimits(20_000, "tail", lines=200),
    hook_names=("Grep",),
)
GLOB = Tool(
    "glob",
    "Find files by name pattern; results are sorted by modification time, newest first.",
    glob,
    GlobParams,
    category="read",
    paths=PathDeclaration(("path",), defaults={"path": "."}),
    kind="search",
    limits=OutputLimits(20_000, "tail", lines=500),
    hook_names=("Glob",),
)
