"""Edits as unified diffs, for the terminal renderer and ``/diff``.

A person watching an agent wants to see what it changed, not ``M file.py``. The
diff of a call is made from the call's own arguments, as the web page does:
``edit_file``'s old and new text (through :mod:`difflib`, so unchanged lines show
as context), ``write_file``'s content (all added), and ``apply_patch``'s patch
(already a diff: its lines keep their signs). ``/diff`` feeds ``git diff`` through
the same lines. Each line is a sign (``+``, ``-``, ``@`` for a header, ``" "`` for
context) and its text; the renderer colours them and makes the text visible.
"""

from __future__ import annotations

import difflib
from typing import Any

DiffLine = tuple[str, str]

EDIT_TOOLS = frozenset({"edit_file", "write_file", "apply_patch"})
DIFF_LINES = 40
"""A diff longer than this shows its head and a count (``--verbose``: all of it)."""


def _path(arguments: dict[str, Any]) -> str:
    path = arguments.get("file_path", arguments.get("path", ""))
    return path if isinstance(path, str) else ""


def call_diff(tool: str, arguments: dict[str, Any]) -> list[DiffLine] | None:
    """The diff a file-changing call makes, from its arguments; None for others."""
    if tool == "edit_file":
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        path = _path(arguments)
        lines: list[DiffLine] = [("@", f"--- {path}"), ("@", f"+++ {path}")]
        changes = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
        for line in list(changes)[2:]:  # its own ---/+++ header names no file
            lines.append(_signed(line))
        return lines
    if tool == "write_file":
        content = arguments.get("content")
        if not isinstance(content, str):
            return None
        count = len(content.splitlines())
        head = ("@", f"+++ {_path(arguments)} (written, {count} line{'s' if count != 1 else ''})")
        return [head, *(("+", "+" + line) for line in content.splitlines())]
    if tool == "apply_patch":
        patch = arguments.get("patch", arguments.get("input"))
        if not isinstance(patch, str):
            return None
        return [_patch_line(line) for line in patch.splitlines()]
    return None


def _signed(line: str) -> DiffLine:
    if line.startswith(("@@", "--- ", "+++ ", "diff --git", "index ", "new file", "deleted file")):
        return ("@", line)
    if line.startswith("+"):
        return ("+", line)
    if line.startswith("-"):
        return ("-", line)
    return (" ", line)


def _patch_line(line: str) -> DiffLine:
    if line.startswith("***"):
        return ("@", line)
    return _signed(line)


def text_diff(text: str) -> list[DiffLine]:
    """``git diff`` output as diff lines."""
    return [_signed(line) for line in text.splitlines()]


def collapsed(lines: list[DiffLine], limit: int = DIFF_LINES) -> tuple[list[DiffLine], int]:
    """The first ``limit`` lines and how many were left out."""
    if len(lines) <= limit:
        return lines, 0
    return lines[:limit], len(lines) - limit


__all__ = ["DIFF_LINES", "EDIT_TOOLS", "DiffLine", "call_diff", "collapsed", "text_diff"]
