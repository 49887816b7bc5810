"""Which arguments of a call show it as a diff: the tool declares them, the
session's ``tool_call_start`` event carries them, and a client (the terminal, an
editor, the web page) draws the diff from the call's own arguments without
knowing the tool, so it needs no tool catalogue of its own."""

from __future__ import annotations

import msgspec


class DiffFields(msgspec.Struct, frozen=True, kw_only=True):
    """Which arguments show a call as a diff (an editor's or the terminal's view):
    the file's ``path``, the ``new`` text and the text it replaces (``old``; None:
    the new text is the whole file); or ``patch``, an argument that is already a
    diff of its own (then the others are not used)."""

    path: str = ""
    new: str = ""
    old: str | None = None
    patch: str | None = None


__all__ = ["DiffFields"]
