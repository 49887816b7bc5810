"""Troupe's tool names as the anchors' hooks know them.

A hook's ``matcher`` is written for Claude Code (``Bash``, ``Read``, ``Write``,
``Edit`` ...) or for Codex (``Bash``, ``apply_patch``). The hook's input carries the
anchor's name (``tool_name``), and a matcher matches a call when it matches that
name, one of its aliases, or Troupe's own name. Tools with no counterpart keep
Troupe's name; MCP tools keep the ``mcp__server__tool`` form both anchors use.
Each tool declares its anchors' names where it is defined (``Tool.hook_names``);
docs/hooks.md lists them.
"""

from __future__ import annotations

import re

from actors.skills.tool import SKILL_HOOK_NAMES, SKILL_TOOL
from actors.tools.builtin import builtin_tool
from actors.tools.tool import Tool


def _declared(tool: str, declared: Tool | None) -> tuple[str, ...]:
    """The anchors' names the tool declares (``hook_names``), first the one a hook
    reads: ``declared``'s (the session's tool of that name), else those of
    Troupe's own tool of that name; none for a custom tool that declares none."""
    if declared is not None:
        return declared.hook_names
    if tool == SKILL_TOOL:  # made per session, over its skills: not in the catalogue
        return SKILL_HOOK_NAMES
    found = builtin_tool(tool)
    return found.hook_names if found is not None else ()


def anchor_name(tool: str, declared: Tool | None = None) -> str:
    """The ``tool_name`` a hook reads for Troupe's ``tool``."""
    names = _declared(tool, declared)
    return names[0] if names else tool


def names_of(tool: str, declared: Tool | None = None) -> tuple[str, ...]:
    """Every name a matcher may use for Troupe's ``tool``."""
    return (*_declared(tool, declared), tool)


def matches(matcher: str, names: tuple[str, ...] | None) -> bool:
    """Whether a group's ``matcher`` selects a run whose subject goes by ``names``
    (a tool's names; for SessionStart its source, for PreCompact its trigger, for
    Notification its type; None: nothing to match, every group applies). A matcher
    is a regular expression matched against a whole name; empty or ``*`` matches all."""
    if matcher in ("", "*") or names is None:
        return True
    try:
        pattern = re.compile(matcher)
    except re.error:
        return False
    return any(pattern.fullmatch(name) for name in names)
