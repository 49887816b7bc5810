"""Turning file bytes into what read_file returns: text, a line window, numbering.

Shared by every environment, so a file reads the same over SFTP as it does locally.
"""

from __future__ import annotations

from environments.errors import BinaryFile, InvalidRequest, NotUtf8
from protocol.environment import FileContent

_BINARY_PROBE = 8192


def looks_binary(data: bytes) -> bool:
    """A NUL byte near the start is the usual sign (it is what git and grep use)."""
    return b"\0" in data[:_BINARY_PROBE]


def utf8_error_text(error: UnicodeDecodeError) -> str:
    """Where bytes stop being UTF-8, worded as Rust's ``Utf8Error`` (both decoders
    measure the invalid sequence as its maximal subpart)."""
    if error.reason == "unexpected end of data":
        return f"incomplete utf-8 byte sequence from index {error.start}"
    return f"invalid utf-8 sequence of {error.end - error.start} bytes from index {error.start}"


def render_file(
    path: str,
    data: bytes,
    offset: int | None,
    limit: int | None,
    line_numbers: bool,
    exact: bool = False,
) -> FileContent:
    """The ``offset``..``offset + limit`` window of a text file, numbered ``NNN | line``,
    or with ``exact`` the whole text as stored: any valid UTF-8 (NUL bytes too),
    never a lossy decoding, since editing tools write it back."""
    if exact:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotUtf8(path, utf8_error_text(error)) from None
        total = len(text.splitlines())
        return FileContent(path=path, text=text, first_line=1, last_line=total, total_lines=total)
    if looks_binary(data):
        raise BinaryFile(f"{path} is a binary file")
    if offset is not None and offset < 1:
        raise InvalidRequest(f"offset must be 1 or more (got {offset})")
    if limit is not None and limit < 1:
        raise InvalidRequest(f"limit must be 1 or more (got {limit})")
    lines = data.decode("utf-8", errors="replace").splitlines()
    total = len(lines)
    first = offset or 1
    if total and first > total:
        raise InvalidRequest(f"offset {first} is past the end of {path} ({total} lines)")
    last = total if limit is None else min(total, first - 1 + limit)
    window = lines[first - 1 : last]
    if line_numbers:
        width = len(str(last or 1))
        text = "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(window, first))
    else:
        text = "\n".join(window)
    return FileContent(path=path, text=text, first_line=first, last_line=last, total_lines=total)
