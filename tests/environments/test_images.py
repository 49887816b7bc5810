"""Image files by their first bytes (environments/images.py): the header decides,
never the name, and a header that does not parse is no image, whatever it claims."""

from __future__ import annotations

import struct

import pytest

from environments.images import ImageInfo, sniff_image
from tests.image_files import gif, jpeg, png, webp


def test_each_format_with_its_size() -> None:
    assert sniff_image(png(3, 2)) == ImageInfo("image/png", 3, 2)
    assert sniff_image(jpeg(5, 4)) == ImageInfo("image/jpeg", 5, 4)
    assert sniff_image(gif(7, 6)) == ImageInfo("image/gif", 7, 6)
    assert sniff_image(webp(9, 8)) == ImageInfo("image/webp", 9, 8)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"just text, named photo.png",
        b"\x89PNG\r\n\x1a\n",  # a signature and nothing after it
        b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dJUNK" + b"\x00" * 8,  # no IHDR
        png(0, 2),  # no width
        png(70_000, 2),  # larger than any image
        b"\xff\xd8\xff\xda\x00\x08",  # a scan before any frame header
        b"\xff\xd8\xff\xe0\x00\x00",  # a segment length that never moves on
        b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 60_000),  # a segment past the end
        b"GIF89a\x00\x00\x05\x00",  # no width
        b"RIFF\x10\x00\x00\x00WEBPVP8 ",  # a chunk cut short
        b"RIFF\x10\x00\x00\x00WAVEfmt ",  # not WebP
        png(3, 2)[:-12],  # cut short: no IEND
        jpeg(5, 4)[:-2],  # no end-of-image marker
        gif(7, 6)[:-1],  # no trailer
        webp(9, 8)[:-3],  # shorter than its RIFF size
    ],
)
def test_what_is_not_an_image(data: bytes) -> None:
    assert sniff_image(data) is None
