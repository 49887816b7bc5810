"""The toy tool of docs/extending.md, "Add a tool": this module is its whole
definition; nothing in Troupe names ``tally`` (tests/session/test_add_a_tool.py
registers it in a session and checks each declared fact)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool
from actors.tools.tool import OutputLimits

LONG = "x" * 5_000 + "END"


class TallyParams(msgspec.Struct, frozen=True):
    file_path: Annotated[str, msgspec.Meta(description="The file to tally")]


async def tally(arguments: TallyParams, context: ToolContext) -> str:
    # context.path: the path the policy resolved and judged (an unchecked one raises)
    return f"tallied {context.path(arguments.file_path)}\n{LONG}"


TALLY = Tool(
    "tally",
    "Tally a file.",
    tally,
    TallyParams,
    category="read",
    paths=PathDeclaration(("file_path",)),
    kind="search",
    limits=OutputLimits(300, "tail"),
    hook_names=("Tally",),
)
