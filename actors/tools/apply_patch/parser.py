"""Parse v4a patch text (spec Appendix A) into frozen operations.

The parser follows codex's lenient reading so that patches the models produce for
codex apply the same way here: the whole text is trimmed first, the ``*** Begin
Patch`` / ``*** End Patch`` and file-operation markers may be padded with
whitespace, a patch wrapped in a ``<<EOF`` ... ``EOF`` heredoc is unwrapped, blank
lines between update chunks are skipped, and the first chunk of an update may omit
its ``@@`` line. Inside an update only a real file-operation header or ``*** End
Patch`` ends the section; any other ``***`` line is a malformed chunk line and is
reported where it stands, as codex does. Errors carry codex's exact wording
(checked against the real codex by ``tests/tools/test_apply_patch_differential.py``),
because the model reads them and codex's prompts teach it what they mean.

The parser only checks the text. Whether a patch fits the files is the applier's
business (see :mod:`actors.tools.apply_patch.applier`).
"""

from __future__ import annotations

import msgspec

from actors.tools.apply_patch.text import split_lines, trim, trim_end

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
CONTEXT_MARKER = "@@ "
EMPTY_CONTEXT_MARKER = "@@"
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')

# The hunk lines start at line 2: line 1 is always "*** Begin Patch".
FIRST_HUNK_LINE = 2

NO_CHUNK_LINES = "Update hunk does not contain any lines"
LAST_LINE_NOT_END = "The last line of the patch must be '*** End Patch'"
OPERATION_HEADERS = (ADD_FILE, DELETE_FILE, UPDATE_FILE)


class UpdateChunk(msgspec.Struct, frozen=True):
    """One ``@@`` section of an update: ``old_lines`` are replaced by ``new_lines``.

    ``change_context`` is the text after ``@@ `` (usually a class or function line)
    that must be found before ``old_lines``; ``is_end_of_file`` says the chunk ended
    with ``*** End of File`` and must match at the end of the file. ``unchanged``
    pairs each context line's index in ``new_lines`` with its index in
    ``old_lines``: those lines keep the file's own text and line ending, so a
    context line the model copied loosely (other whitespace, ASCII for typographic
    punctuation) does not rewrite the file's line.
    """

    change_context: str | None
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    is_end_of_file: bool = False
    unchanged: tuple[tuple[int, int], ...] = ()


class AddFile(msgspec.Struct, frozen=True, tag="add"):
    """Create ``path`` (or overwrite it, as codex does) with ``contents``."""

    path: str
    contents: str


class DeleteFile(msgspec.Struct, frozen=True, tag="delete"):
    """Remove the file at ``path``."""

    path: str


class UpdateFile(msgspec.Struct, frozen=True, tag="update"):
    """Edit ``path`` chunk by chunk, then optionally move the result to ``move_to``."""

    path: str
    chunks: tuple[UpdateChunk, ...]
    move_to: str | None = None


FileOperation = AddFile | DeleteFile | UpdateFile


class Patch(msgspec.Struct, frozen=True):
    """A parsed patch: its operations in order, and the patch text without any
    heredoc wrapper (lines joined with ``\\n``), which is what a tool would echo."""

    operations: tuple[FileOperation, ...]
    text: str


class PatchParseError(Exception):
    """The patch text is not a valid v4a patch.

    ``str(error)`` is codex's message: ``Invalid patch: <message>`` when the
    envelope is wrong (``line_number`` is None), ``Invalid patch hunk on line <n>:
    <message>`` when a file operation is.
    """

    def __init__(self, message: str, line_number: int | None = None) -> None:
        self.message = message
        self.line_number = line_number
        if line_number is None:
            text = f"Invalid patch: {message}"
        else:
            text = f"Invalid patch hunk on line {line_number}: {message}"
        super().__init__(text)


def parse_patch(patch_text: str) -> Patch:
    """Parse ``patch_text`` into a :class:`Patch`, or raise :class:`PatchParseError`."""
    patch_lines, body = _envelope(split_lines(trim(patch_text)))
    operations: list[FileOperation] = []
    remaining = body
    line_number = FIRST_HUNK_LINE
    while remaining:
        if trim(remaining[0]) == END_PATCH:
            # An early "*** End Patch" ends the patch, as in codex, if only blank
            # lines follow it (before the final one).
            if any(trim(line) for line in remaining[1:]):
                raise PatchParseError(LAST_LINE_NOT_END)
            break
        operation, used = _parse_operation(remaining, line_number)
        operations.append(operation)
        line_number += used
        remaining = remaining[used:]
    return Patch(operations=tuple(operations), text="\n".join(patch_lines))


def _envelope(lines: list[str]) -> tuple[list[str], list[str]]:
    """Return (the patch's lines, the lines between Begin and End), unwrapping a
    ``<<EOF`` heredoc the way codex's lenient mode does (gpt-4.1 sends those)."""
    try:
        return _strict_envelope(lines)
    except PatchParseError:
        wrapped = len(lines) >= 4 and lines[0] in HEREDOC_OPENERS and lines[-1].endswith("EOF")
        if not wrapped:
            raise
    return _strict_envelope(lines[1:-1])


def _strict_envelope(lines: list[str]) -> tuple[list[str], list[str]]:
    first = trim(lines[0]) if lines else None
    last = trim(lines[-1]) if lines else None
    if first == BEGIN_PATCH and last == END_PATCH:
        return lines, lines[1:-1]
    if first is not None and first != BEGIN_PATCH:
        raise PatchParseError("The first line of the patch must be '*** Begin Patch'")
    raise PatchParseError(LAST_LINE_NOT_END)


def _parse_operation(lines: list[str], line_number: int) -> tuple[FileOperation, int]:
    """Parse the file operation at the start of ``lines``; return it and the
    number of lines it used."""
    header = trim(lines[0])
    if header.startswith(ADD_FILE):
        return _parse_add(header[len(ADD_FILE) :], lines)
    if header.startswith(DELETE_FILE):
        return DeleteFile(path=header[len(DELETE_FILE) :]), 1
    if header.startswith(UPDATE_FILE):
        return _parse_update(header[len(UPDATE_FILE) :], lines, line_number)
    raise PatchParseError(
        f"'{header}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
        line_number,
    )


def _parse_add(path: str, lines: list[str]) -> tuple[AddFile, int]:
    contents: list[str] = []
    for line in lines[1:]:
        if not line.startswith("+"):
            break
        contents.append(line[1:] + "\n")
    return AddFile(path=path, contents="".join(contents)), 1 + len(contents)


def _parse_update(path: str, lines: list[str], line_number: int) -> tuple[UpdateFile, int]:
    used = 1
    move_to: str | None = None
    # Before the first chunk codex skips End of File markers and takes one move
    # line; it ignores trailing whitespace on the move line, not leading (an
    # indented move line is a context line).
    while used < len(lines):
        line = lines[used]
        if _is_end_of_file(line):
            used += 1
        elif move_to is None and trim_end(line).startswith(MOVE_TO):
            move_to = trim_end(line)[len(MOVE_TO) :]
            used += 1
        else:
            break
    chunks: list[UpdateChunk] = []
    while used < len(lines):
        line = lines[used]
        if chunks and not trim(line):
            used += 1  # blank lines may separate chunks (before the first, they are context)
            continue
        if _ends_update(line):
            break
        chunk, chunk_used = _parse_chunk(lines[used:], line_number + used, not chunks)
        chunks.append(chunk)
        used += chunk_used
    if not chunks:
        raise PatchParseError(f"Update file hunk for path '{path}' is empty", line_number)
    return UpdateFile(path=path, chunks=tuple(chunks), move_to=move_to), used


def _ends_update(line: str) -> bool:
    """Whether ``line`` closes an update section: the next operation's header or
    ``*** End Patch``. Other lines starting with ``*`` belong to the section."""
    if not line.startswith("*"):
        return False
    marker = trim(line)
    return marker == END_PATCH or marker.startswith(OPERATION_HEADERS)


def _is_end_of_file(line: str) -> bool:
    return trim_end(line) == END_OF_FILE


def _parse_chunk(lines: list[str], line_number: int, first_chunk: bool) -> tuple[UpdateChunk, int]:
    """Parse one ``@@`` chunk; only the first chunk of an update may lack its ``@@``.

    ``line_number`` is the number of the chunk's first line; errors name the line
    at fault.
    """
    context: str | None = None
    start = 1
    marker = trim_end(lines[0])  # codex ignores trailing whitespace on @@ lines
    if marker == EMPTY_CONTEXT_MARKER:
        pass
    elif marker.startswith(CONTEXT_MARKER):
        context = marker[len(CONTEXT_MARKER) :]
    elif first_chunk:
        start = 0
    else:
        raise PatchParseError(
            f"Expected update hunk to start with a @@ context marker, got: '{lines[0]}'",
            line_number,
        )
    if start >= len(lines):
        raise PatchParseError(NO_CHUNK_LINES, line_number + 1)
    old: list[str] = []
    new: list[str] = []
    unchanged: list[tuple[int, int]] = []
    end_of_file = False
    used = 0
    for line in lines[start:]:
        if _is_end_of_file(line):
            if used == 0:
                raise PatchParseError(NO_CHUNK_LINES, line_number + start)
            end_of_file = True
            used += 1
            break
        marker, rest = line[:1], line[1:]
        if marker in ("", " "):
            # A context line; an empty line is an empty context line.
            unchanged.append((len(new), len(old)))
            old.append(rest)
            new.append(rest)
        elif marker == "+":
            new.append(rest)
        elif marker == "-":
            old.append(rest)
        elif used == 0:
            raise PatchParseError(
                f"Unexpected line found in update hunk: '{line}'. Every line should start "
                "with ' ' (context line), '+' (added line), or '-' (removed line)",
                line_number + start,
            )
        else:
            break  # the start of the next chunk or operation
        used += 1
    chunk = UpdateChunk(
        change_context=context,
        old_lines=tuple(old),
        new_lines=tuple(new),
        is_end_of_file=end_of_file,
        unchanged=tuple(unchanged),
    )
    return chunk, start + used
