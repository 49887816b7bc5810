"""A file's text as lines that each keep their own ending, edited the way codex does.

A patch must not change more of a file than it says. So the file is split into
lines that remember their ending (``\\n``, ``\\r\\n``, a lone ``\\r``, or none for an
unterminated last line); lines outside a chunk, and a chunk's context lines, are
written back exactly as they were. Lines the patch adds take the file's preferred
ending, the first one it uses (LF for a file without any), so a CRLF file stays
CRLF. Every line of an updated file ends with a line ending, as in codex: a
missing final newline is added, blank last lines are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

# codex splits files on these three only (not on \v, \f, \x85, \u2028, ...).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
DEFAULT_ENDING = "\n"


class SourceLine(msgspec.Struct, frozen=True):
    """One line of a file: its text and the ending that followed it ("" for none)."""

    text: str
    ending: str


class Replacement(msgspec.Struct, frozen=True):
    """Replace ``old_length`` lines starting at ``start`` with ``new_lines``.

    ``unchanged`` pairs an index in ``new_lines`` with an offset from ``start``:
    that new line is the file's own line at that offset, kept as it is.
    """

    start: int
    old_length: int
    new_lines: tuple[str, ...]
    unchanged: tuple[tuple[int, int], ...] = ()


class SourceFile(msgspec.Struct, frozen=True):
    """A file's lines and the ending new lines get."""

    lines: tuple[SourceLine, ...]
    preferred_ending: str

    @classmethod
    def parse(cls, text: str) -> SourceFile:
        lines: list[SourceLine] = []
        position = 0
        for found in _LINE_BREAK.finditer(text):
            lines.append(SourceLine(text[position : found.start()], found.group()))
            position = found.end()
        if position < len(text):
            lines.append(SourceLine(text[position:], ""))
        preferred = lines[0].ending if lines and lines[0].ending else DEFAULT_ENDING
        return cls(tuple(lines), preferred)

    @property
    def texts(self) -> list[str]:
        """The lines without their endings, which is what chunks are matched against."""
        return [line.text for line in self.lines]

    def replaced(self, replacements: Iterable[Replacement]) -> str:
        """The file's text after ``replacements`` (sorted by ``start``, not
        overlapping), with every line ending in a line ending."""
        result: list[SourceLine] = []
        position = 0
        for replacement in replacements:
            result.extend(self.lines[position : replacement.start])
            kept = dict(replacement.unchanged)
            for index, text in enumerate(replacement.new_lines):
                offset = kept.get(index)
                if offset is None:
                    result.append(SourceLine(text, self.preferred_ending))
                else:
                    result.append(self.lines[replacement.start + offset])
            position = max(position, replacement.start + replacement.old_length)
        result.extend(self.lines[position:])
        return "".join(line.text + (line.ending or self.preferred_ending) for line in result)
