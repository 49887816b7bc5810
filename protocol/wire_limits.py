"""Limits every client frame is held to before and after it is decoded.

Two things msgspec cannot be asked to check by itself:

- Nesting. msgspec recurses once per level; a frame nested a thousand deep ends
  in ``RecursionError``. Frames are refused past :data:`MAX_NESTING` levels, a
  documented limit that is the same for JSON and msgpack and far above what any
  request needs (the deepest, ``create_session`` with a ``config``, is 3).
- Integer range. Python integers have no bound, but msgpack and SQLite stop at 64
  bits. Every integer anywhere in a decoded request must fit a signed 64-bit
  integer, so nothing out of range ever reaches an actor, a reply or the store.

Both checks are cheap on ordinary frames: the nesting scan only runs when the frame
holds more opening brackets (or msgpack container headers) than the limit, which a
count in C tells at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

import msgspec

MAX_NESTING = 32
"""Deepest nesting of arrays and objects (maps) a client frame may have."""
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1

_ALL_BYTES = bytes(range(256))
_JSON_OPENERS = b"[{"
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_DEPTH = bytes.maketrans(b"[{]}", b"\x01\x01\x02\x02")
_MSGPACK_CONTAINERS = bytes(range(0x80, 0xA0)) + b"\xdc\xdd\xde\xdf"


def _only(data: bytes, keep: bytes) -> bytes:
    return data.translate(None, _ALL_BYTES.translate(None, keep))


def json_depth_exceeds(data: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the JSON text nests arrays/objects deeper than ``limit``."""
    if len(_only(data, _JSON_OPENERS)) <= limit:
        return False
    brackets = _only(_JSON_STRING.sub(b'""', data), b"[{]}").translate(_JSON_DEPTH)
    steps = (1 if byte == 1 else -1 for byte in brackets)
    return max(accumulate(steps), default=0) > limit


def msgpack_depth_exceeds(data: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the msgpack data nests arrays/maps deeper than ``limit``.

    Walks the headers without building anything (iteratively, so the walk itself
    cannot overflow the stack); truncated data is left for the decoder to report.
    """
    if len(_only(data, _MSGPACK_CONTAINERS)) <= limit:
        return False
    pending = [1]  # items still to read at each open level
    position, size = 0, len(data)
    while pending and position < size:
        if pending[-1] == 0:
            pending.pop()
            continue
        pending[-1] -= 1
        items, position = _msgpack_item(data, position)
        if items:
            if len(pending) > limit:
                return True
            pending.append(items)
    return False


_FIXED = {
    0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
    0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17,
}  # fmt: skip
"""Header byte -> bytes that follow it, for nil, booleans, numbers and fixext."""
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),
          0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0)}  # fmt: skip
"""Header byte -> (length bytes, extra bytes before the payload) for bin/ext/str."""


def _msgpack_item(data: bytes, position: int) -> tuple[int, int]:
    """Skip the header at ``position``: (child items it opens, next position)."""
    head = data[position]
    position += 1
    if head <= 0x7F or head >= 0xE0:
        return 0, position
    if head <= 0x8F:
        return 2 * (head & 0x0F), position
    if head <= 0x9F:
        return head & 0x0F, position
    if head <= 0xBF:
        return 0, position + (head & 0x1F)
    if head in _FIXED:
        return 0, position + _FIXED[head]
    if head in _SIZED:
        width, extra = _SIZED[head]
        length = int.from_bytes(data[position : position + width], "big")
        return 0, position + width + extra + length
    if head in (0xDC, 0xDE):
        count = int.from_bytes(data[position : position + 2], "big")
        return count * (2 if head == 0xDE else 1), position + 2
    if head in (0xDD, 0xDF):
        count = int.from_bytes(data[position : position + 4], "big")
        return count * (2 if head == 0xDF else 1), position + 4
    return 0, position  # 0xC1 is never used; the decoder reports it


def out_of_range_integers(value: Any, path: str = "$") -> Iterator[tuple[str, int]]:
    """(path, value) of every integer in a decoded frame outside signed 64 bits."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            yield path, value
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            yield from out_of_range_integers(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from out_of_range_integers(item, f"{path}.{key}")
    elif isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            yield from out_of_range_integers(item, f"{path}[{index}]")
