"""Troupe's tool names as the anchors' hooks know them.

A hook's ``matcher`` is written for Claude Code (``Bash``, ``Read``, ``Write``,
``Edit`` ...) or for Codex (``Bash``, ``apply_patch``). The hook's input carries the
anchor's name (``tool_name``), and a matcher matches a call when it matches that
name, one of its aliases, or Troupe's own name. Tools with no counterpart keep
Troupe's name; MCP tools keep the ``mcp__server__tool`` form both anchors use.
The table is documented in docs/hooks.md.
"""

from __future__ import annotations

import re

ANCHOR_NAMES: dict[str, tuple[str, ...]] = {
    "shell": ("Bash",),
    "terminal": ("Bash",),
    "read_file": ("Read",),
    "read_many_files": ("Read",),
    "write_file": ("Write",),
    "edit_file": ("Edit",),
    "apply_patch": ("apply_patch", "Edit", "Write"),
    "grep": ("Grep",),
    "glob": ("Glob",),
    "list_dir": ("LS",),
    "spawn_agent": ("Task", "Agent"),
    "update_plan": ("TodoWrite",),
    "skill": ("Skill",),
}
"""Troupe's name -> the anchors' name first, then the aliases a matcher may use."""


def anchor_name(tool: str) -> str:
    """The ``tool_name`` a hook reads for Troupe's ``tool``."""
    names = ANCHOR_NAMES.get(tool)
    return names[0] if names else tool


def names_of(tool: str) -> tuple[str, ...]:
    """Every name a matcher may use for Troupe's ``tool``."""
    return (*ANCHOR_NAMES.get(tool, ()), tool)


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
