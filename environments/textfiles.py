"""Turning file bytes into what read_file returns: text, a line window, numbering.

Shared by every environment, so a file reads the same over SFTP as it does locally.
"""

from __future__ import annotations

from typing import NamedTuple

from environments.errors import BinaryFile, InvalidRequest, NotUtf8
from environments.images import sniff_image
from protocol.environment import MAX_IMAGE_TRANSFER, FileContent, ImageFile

_BINARY_PROBE = 8192
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
"""Byte-order marks that declare a wide encoding, longest first (UTF-32-LE's
starts with UTF-16-LE's). Such text is full of NUL bytes, so it is tried before
the binary check."""


class Decoded(NamedTuple):
    """A file's text and, when it was not UTF-8, what was assumed and why."""

    text: str
    note: str | None


def decode_text(path: str, data: bytes) -> Decoded:
    """Text for reading, never silently lossy: UTF-8 as it is; a UTF-16 or UTF-32
    byte-order mark is believed; otherwise (no NUL byte, not UTF-8) the bytes are
    read as cp1252, the usual single-byte encoding of such files, or as latin-1
    when cp1252 leaves one of its five bytes undefined (latin-1 maps every byte).
    Anything but UTF-8 comes with a note naming the encoding assumed, so the model
    does not take a guessed character for what is stored. NUL bytes without a
    byte-order mark are :class:`BinaryFile`, as before."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                break  # not what its first bytes claim: judged as any other file
            return Decoded(text, f"{path} is {encoding} (by its byte-order mark), not utf-8")
    if looks_binary(data):
        raise BinaryFile(f"{path} is a binary file")
    try:
        return Decoded(data.decode("utf-8"), None)
    except UnicodeDecodeError as error:
        why = utf8_error_text(error)
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return Decoded(text, f"{path} is not valid utf-8 ({why}); read as {encoding}")
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


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
    images: bool = False,
) -> FileContent:
    """The ``offset``..``offset + limit`` window of a text file, numbered
    ``NNN | line`` (decoded by :func:`decode_text`, its note kept in
    ``encoding_note``), or with ``exact`` the whole text as stored: any valid
    UTF-8 (NUL bytes too), never a lossy decoding, since editing tools write it
    back. With ``images``, an image file (by its header, :mod:`environments.images`)
    comes back as its bytes instead."""
    if images and not exact:
        found = sniff_image(data)
        if found is not None:
            size = len(data)
            kept = data if size <= MAX_IMAGE_TRANSFER else None
            image = ImageFile(found.media_type, found.width, found.height, size, kept)
            return FileContent(path, "", 0, 0, 0, image=image)
    if exact:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotUtf8(path, utf8_error_text(error)) from None
        total = len(text.splitlines())
        return FileContent(path=path, text=text, first_line=1, last_line=total, total_lines=total)
    if offset is not None and offset < 1:
        raise InvalidRequest(f"offset must be 1 or more (got {offset})")
    if limit is not None and limit < 1:
        raise InvalidRequest(f"limit must be 1 or more (got {limit})")
    decoded = decode_text(path, data)
    lines = decoded.text.splitlines()
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
    return FileContent(
        path=path,
        text=text,
        first_line=first,
        last_line=last,
        total_lines=total,
        encoding_note=decoded.note,
    )
