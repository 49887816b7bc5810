"""Text from a model or a tool, made safe to print on a terminal.

A terminal obeys what it is sent: ``\\r`` moves back to the start of the line,
``\\x1b[2K`` erases it, U+202E reverses what follows. Printed raw, a command such
as ``rm -rf ~/p\\r\\x1b[2KApprove command: ls`` shows as ``ls`` in its own
approval prompt. So everything that came from the model or a tool passes through
:func:`visible` before it is printed: control characters (C0, DEL, C1), escape
sequences (their ESC), Unicode format characters (bidi overrides and isolates,
zero-width characters) and line separators are written as escapes (``\\r``,
``\\x1b``, ``\\u202e``), so the user reads exactly what the text holds.

One function, used by every place that prints such text (the renderer, the
approval prompt, tool lines, diffs, the live output), so no path forgets it.
"""

from __future__ import annotations

NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
"""Controls, format characters (bidi, zero-width), line and paragraph separators,
surrogates, private-use and unassigned code points: none should reach the screen raw."""


def _escape(char: str) -> str:
    named = NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _hidden(char: str) -> bool:
    if char == " " or char.isprintable():
        return False
    import unicodedata  # for the rare unprintable character: not imported at start

    return unicodedata.category(char) in HIDDEN_CATEGORIES


def visible(text: str, keep: str = "") -> str:
    """``text`` with every control character, escape sequence start and invisible
    format character written as an escape; the characters in ``keep`` (say ``\\n``
    for a multi-line answer) stay as they are."""
    if text.isprintable():  # the common case, and fast
        return text
    return "".join(_escape(char) if char not in keep and _hidden(char) else char for char in text)


def has_hidden(text: str) -> bool:
    """Whether :func:`visible` would change ``text`` (for a warning beside it)."""
    return any(_hidden(char) for char in text)


__all__ = ["has_hidden", "visible"]
