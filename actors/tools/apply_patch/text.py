"""Line splitting and whitespace trimming with the same rules as codex (Rust).

Python's ``str.strip()`` and ``str.splitlines()`` differ from Rust's ``trim()`` and
``lines()`` in small ways (Python also treats ``\\x1c``-``\\x1f`` as spaces and splits
on ``\\v``, ``\\f``, ``\\x85`` and more). Patches written by a model must parse and
match exactly as they would in codex, so both the parser and the matcher use these
helpers instead of the built-ins.
"""

from __future__ import annotations

# The Unicode White_Space property, which Rust's str::trim() strips.
RUST_WHITESPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def trim(text: str) -> str:
    """Strip leading and trailing whitespace like Rust's ``str::trim``."""
    return text.strip(RUST_WHITESPACE)


def trim_end(text: str) -> str:
    """Strip trailing whitespace like Rust's ``str::trim_end``."""
    return text.rstrip(RUST_WHITESPACE)


def split_lines(text: str) -> list[str]:
    """Split a patch into lines as codex does: on ``\\n`` only, every trailing
    ``\\r`` dropped (a CRLF patch of a line that itself ends in ``\\r`` loses both),
    and no empty last element for a final newline."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [part.rstrip("\r") for part in parts]
