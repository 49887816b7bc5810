"""The page's table of which arguments show a built-in tool's call as a diff, made
from the tools' own declarations (:attr:`actors.tools.tool.Tool.diff`).

An event stored since tool calls carried their ``diff`` fields says so itself; an
older one does not, and the page looks its tool up here. Served as an ES module
(``/tool_diffs.js``) so the page's scripts name no tool: adding a tool that edits
files is its definition alone, here as in the terminal and over ACP.
"""

from __future__ import annotations

import msgspec

from actors.tools.builtin import BUILTIN_TOOLS


def tool_diffs_module() -> bytes:
    """``export const BUILTIN_DIFFS = {tool name: its DiffFields}``, for the tools
    that declare them."""
    table = {name: tool.diff for name, tool in BUILTIN_TOOLS.items() if tool.diff is not None}
    return b"export const BUILTIN_DIFFS = " + msgspec.json.encode(table) + b";\n"


__all__ = ["tool_diffs_module"]
