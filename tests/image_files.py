"""Real image files for tests, built byte by byte: a PNG that decoders accept
(zlib-compressed scanlines, CRCs), and the headers of JPEG, GIF and WebP files."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 3, height: int = 2, noise: bytes = b"") -> bytes:
    """A valid RGB PNG; ``noise`` goes into a private ancillary chunk (to make it big)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + bytes([200, 30, 90]) * width for _ in range(height))
    extra = chunk(b"tEXt", b"Comment\x00" + noise) if noise else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + extra
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def jpeg(width: int = 5, height: int = 4) -> bytes:
    """A JPEG's markers up to its frame header (APP0 first, as cameras write)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def gif(width: int = 7, height: int = 6) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def webp(width: int = 9, height: int = 8) -> bytes:
    """An extended-format (VP8X) WebP header."""
    body = (
        b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    )
    chunk = b"VP8X" + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk
