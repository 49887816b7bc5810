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

from typing import Any

import msgspec

from protocol.diff_fields import DiffFields
from protocol.events import ToolCallStartEvent

DiffLine = tuple[str, str]

DIFF_LINES = 40
"""A diff longer than this shows its head and a count (``--verbose``: all of it)."""


def _path(arguments: dict[str, Any], declared: str) -> str:
    path = arguments.get(declared, arguments.get("path", ""))
    return path if isinstance(path, str) else ""


def diff_fields(data: ToolCallStartEvent) -> DiffFields | None:
    """Which arguments of the call show it as a diff, as its tool declares: the
    event carries them; for an event stored before it did, Troupe's own tool of
    that name says (imported then only: the catalogue imports every tool, and the
    actor kernel under them, which a run through a server never needs otherwise)."""
    if not isinstance(data.diff, msgspec.UnsetType):
        return data.diff
    from actors.tools.builtin import builtin_tool

    found = builtin_tool(data.tool_name)
    return found.diff if found is not None else None


def call_diff(fields: DiffFields | None, arguments: dict[str, Any]) -> list[DiffLine] | None:
    """The diff a file-changing call makes, from its arguments named by ``fields``
    (:func:`diff_fields`); None for other calls."""
    if fields is None:
        return None
    if fields.patch is not None:
        patch = arguments.get(fields.patch, arguments.get("input"))
        if not isinstance(patch, str):
            return None
        return [_patch_line(line) for line in patch.splitlines()]
    if fields.old is not None:
        old, new = arguments.get(fields.old), arguments.get(fields.new)
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        path = _path(arguments, fields.path)
        lines: list[DiffLine] = [("@", f"--- {path}"), ("@", f"+++ {path}")]
        import difflib  # here: it compiles patterns on import, and most runs show no edit

        changes = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
        for line in list(changes)[2:]:  # its own ---/+++ header names no file
            lines.append(_signed(line))
        return lines
    content = arguments.get(fields.new)
    if not isinstance(content, str):
        return None
    count = len(content.splitlines())
    written = f"(written, {count} line{'s' if count != 1 else ''})"
    head = ("@", f"+++ {_path(arguments, fields.path)} {written}")
    return [head, *(("+", "+" + line) for line in content.splitlines())]


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


__all__ = ["DIFF_LINES", "DiffLine", "call_diff", "collapsed", "diff_fields", "text_diff"]
