"""Image files by their first bytes: PNG, JPEG, GIF and WebP, with their size in
pixels read from the header, never by decoding the picture.

The file is hostile input (the model chose it, anyone may have written it): the
extension proves nothing, so the signature decides, and a file whose header
cannot be read to a plausible width and height, or that is cut short (no end
marker where the format puts one), is not an image, whatever its first bytes
claim. A provider refuses a broken image with an error that would
then stay in the conversation and fail every later request, so only headers that
parse are sent.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

MAX_SIDE = 16_384
"""Larger sides than any provider takes (or any honest file has): not an image."""


class ImageInfo(NamedTuple):
    media_type: str
    width: int
    height: int


def sniff_image(data: bytes) -> ImageInfo | None:
    """The image ``data`` holds by its signature and header, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        found = _png(data)
    elif data.startswith(b"\xff\xd8\xff"):
        found = _jpeg(data)
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        found = _gif(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        found = _webp(data)
    else:
        return None
    if found is None or not _whole(data):
        return None
    media, width, height = found
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        return None
    return ImageInfo(media, width, height)


def _whole(data: bytes) -> bool:
    """The file ends where its format says: PNG's IEND chunk, JPEG's EOI marker
    (trailing padding allowed), GIF's trailer, WebP's RIFF size."""
    if data.startswith(b"\x89PNG"):
        return data[-12:-4] == b"\x00\x00\x00\x00IEND"
    if data.startswith(b"\xff\xd8"):
        return b"\xff\xd9" in data[-64:]
    if data.startswith(b"GIF"):
        return data.rstrip(b"\x00").endswith(b";")
    size = int.from_bytes(data[4:8], "little") + 8
    return len(data) in (size, size + 1)  # a RIFF chunk of odd size is padded


def _png(data: bytes) -> tuple[str, int, int] | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return "image/png", width, height


def _gif(data: bytes) -> tuple[str, int, int] | None:
    if len(data) < 10:
        return None
    width, height = struct.unpack("<HH", data[6:10])
    return "image/gif", width, height


def _jpeg(data: bytes) -> tuple[str, int, int] | None:
    """Walk the marker segments to the first start-of-frame (SOF0..SOF15 but the
    DHT, JPG and DAC markers), which holds the height and width."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if length < 2:
            return None
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if at + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return "image/jpeg", width, height
        if marker == 0xDA:  # start of scan before any frame header
            return None
        at += 2 + length
    return None


def _webp(data: bytes) -> tuple[str, int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return "image/webp", width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return "image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return "image/webp", width, height
    return None
