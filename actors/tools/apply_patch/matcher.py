"""Find where update chunks belong in a file and compute the file's new text.

Models copy context lines imperfectly, so a chunk's lines are looked for on a
ladder of ever looser comparisons, as codex does: exact, then ignoring trailing
whitespace, then ignoring surrounding whitespace, then also treating typographic
dashes, quotes and odd spaces as their ASCII forms. The first rung that matches
anywhere wins, so an exact match later in the file beats a fuzzy one earlier.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Literal

from actors.tools.apply_patch.parser import UpdateChunk
from actors.tools.apply_patch.source import Replacement, SourceFile
from actors.tools.apply_patch.text import trim, trim_end

# Read-only, so the module holds no mutable state.
_ASCII_LOOKALIKES = MappingProxyType(
    str.maketrans(
        {
            **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
            **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
            **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
            **dict.fromkeys(
                "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000",
                " ",
            ),
        }
    )
)


def _exact(line: str) -> str:
    return line


def normalise_loosely(line: str) -> str:
    """Trimmed, with unicode dashes, quotes and spaces folded to ASCII: the loosest
    rung of the ladder, which edit_file's whitespace-tolerant fallback shares."""
    return trim(line).translate(_ASCII_LOOKALIKES)


FUZZ_LADDER: tuple[Callable[[str], str], ...] = (
    _exact,
    trim_end,
    trim,
    normalise_loosely,
)


class ChunkNotFoundError(Exception):
    """A chunk's ``@@`` context line (``kind="context"``) or its old lines
    (``kind="lines"``) are not in the file; ``text`` is what was looked for. The
    applier turns this into codex's message, which names the file."""

    def __init__(self, kind: Literal["context", "lines"], text: str) -> None:
        super().__init__(f"{kind} not found: {text}")
        self.kind = kind
        self.text = text


def seek_sequence(
    lines: Sequence[str], pattern: Sequence[str], start: int, end_of_file: bool
) -> int | None:
    """Index of the first place at or after ``start`` where ``pattern`` occurs in
    ``lines``, trying each rung of :data:`FUZZ_LADDER` in turn; None if absent.

    An empty pattern matches at ``start``. With ``end_of_file`` the pattern may only
    match as the file's last lines (codex's reading of ``*** End of File``), and
    still not before ``start``, so chunks never overlap.
    """
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    last_start = len(lines) - len(pattern)
    first_start = max(start, last_start) if end_of_file else start
    for normalise in FUZZ_LADDER:
        wanted = [normalise(line) for line in pattern]
        for index in range(first_start, last_start + 1):
            window = lines[index : index + len(pattern)]
            if all(normalise(have) == want for have, want in zip(window, wanted, strict=True)):
                return index
    return None


def find_replacements(lines: Sequence[str], chunks: Sequence[UpdateChunk]) -> list[Replacement]:
    """Locate every chunk, in order, each after the previous one; raise
    :class:`ChunkNotFoundError` for the first chunk that cannot be placed."""
    replacements: list[Replacement] = []
    cursor = 0
    for chunk in chunks:
        if chunk.change_context is not None:
            found = seek_sequence(lines, [chunk.change_context], cursor, end_of_file=False)
            if found is None:
                raise ChunkNotFoundError("context", chunk.change_context)
            cursor = found + 1
        if not chunk.old_lines:
            # A pure addition goes at the end of the file, after any blank last lines.
            replacements.append(Replacement(len(lines), 0, chunk.new_lines))
            continue
        pattern = chunk.old_lines
        new_lines = chunk.new_lines
        found = seek_sequence(lines, pattern, cursor, chunk.is_end_of_file)
        if found is None and pattern[-1] == "":
            # A trailing empty old line stands for the file's final newline, which
            # is not a line of its own; retry without it.
            pattern = pattern[:-1]
            if new_lines and new_lines[-1] == "":
                new_lines = new_lines[:-1]
            found = seek_sequence(lines, pattern, cursor, chunk.is_end_of_file)
        if found is None:
            raise ChunkNotFoundError("lines", "\n".join(chunk.old_lines))
        unchanged = tuple(
            (new, old)
            for new, old in chunk.unchanged
            if new < len(new_lines) and old < len(pattern)
        )
        replacements.append(Replacement(found, len(pattern), new_lines, unchanged))
        cursor = found + len(pattern)
    replacements.sort(key=lambda replacement: replacement.start)
    return replacements


def apply_chunks(original: str, chunks: Sequence[UpdateChunk]) -> str:
    """The text of a file after applying ``chunks`` to ``original``: lines the
    chunks do not change (their context lines included) keep their text and ending,
    new lines take the file's preferred ending, and the result ends with a line
    ending (codex scenario 014); see :mod:`actors.tools.apply_patch.source`."""
    source = SourceFile.parse(original)
    return source.replaced(find_replacements(source.texts, chunks))
