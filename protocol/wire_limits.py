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

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any, cast

import msgspec

MAX_NESTING = 32
"""Deepest nesting of arrays and objects (maps) a client frame may have."""
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DIGITS = bytes(ord("1") if chr(byte).isdigit() and byte < 128 else ord("0") for byte in range(256))
_LONG_NUMBER = b"1" * 19
"""A JSON integer outside 64 bits has at least 19 digits in a row."""
_MSGPACK_BIG = b"\xcf"
"""msgpack's uint64 header: the only way msgpack carries a value past 2**63 - 1."""


def _all_but(kept: bytes) -> bytes:
    """Every byte value except ``kept``: what ``bytes.translate`` should delete."""
    return bytes(byte for byte in range(256) if byte not in kept)


_JSON_OPENERS = _all_but(b"[{")
_MSGPACK_CONTAINERS = _all_but(bytes(range(0x80, 0xA0)) + b"\xdc\xdd\xde\xdf")
_JSON_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = _all_but(b"[]{}")
_LOOSE_MSGPACK = msgspec.msgpack.Decoder()
_SCALARS = re.compile(rb"[\x00-\x7f\xc0\xc2\xc3\xe0-\xff]+")
"""One-byte msgpack items (fixints, nil, booleans), skipped in C by the walk."""


def _count(data: bytes, others: bytes) -> int:
    """How many bytes of ``data`` are not in ``others`` (one pass in C)."""
    return len(data.translate(None, others))


@functools.cache
def _nested_at_most(limit: int) -> re.Pattern[bytes]:
    """Brackets nested ``limit`` deep at most, as one regular expression: level 1
    is ``[]``, level k is ``[`` level k-1 repeated ``]``. Possessive repeats keep
    matching linear: the regex engine scans once, in C. Built at the first check
    (compiling it is about a twentieth of an interpreter's start)."""
    pattern = r"\[\]"
    for _ in range(limit - 1):
        pattern = r"\[(?:" + pattern + r")*+\]"
    return re.compile(("(?:" + pattern + ")*+").encode())


def json_depth_exceeds(data: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the JSON text nests arrays/objects deeper than ``limit``.

    Outside strings only brackets matter; what is left must match the pattern of
    brackets nested at most ``limit`` deep. Unbalanced text is left to the
    decoder, which names it.
    """
    if _count(data, _JSON_OPENERS) <= limit:
        return False
    brackets = _JSON_STRING.sub(b"", data).translate(_JSON_BRACKETS, _NOT_BRACKETS)
    if brackets.count(b"[") != brackets.count(b"]"):
        return brackets.count(b"[") > limit and b"[" * (limit + 1) in brackets
    shallow = _nested_at_most(limit)
    return shallow.fullmatch(brackets) is None


def msgpack_depth_exceeds(data: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the msgpack data nests arrays/maps deeper than ``limit``.

    The data is decoded without a type and written as JSON (both in C, and a
    thousand levels deep is already refused there), whose brackets are then
    measured like a JSON frame's. Data JSON cannot carry (map keys that are
    arrays) is walked header by header instead. Undecodable data is left to the
    decoder, which names the problem.
    """
    if _count(data, _MSGPACK_CONTAINERS) <= limit:
        return False
    try:
        value = _LOOSE_MSGPACK.decode(data)
    except RecursionError:
        return True
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    try:
        return json_depth_exceeds(msgspec.json.encode(value, enc_hook=repr), limit)
    except (TypeError, msgspec.EncodeError):
        return _walk_exceeds(data, limit)


def _walk_exceeds(data: bytes, limit: int) -> bool:
    """The header walk: iterative, so it cannot overflow the stack itself."""
    pending: list[int] = [1]  # items still to read at each open level
    position: int = 0
    size = len(data)
    while pending and position < size:
        if pending[-1] == 0:
            pending.pop()
            continue
        if pending[-1] > 1 and (run := _SCALARS.match(data, position)):
            skipped: int = min(run.end() - position, pending[-1])  # one-byte items, in C
            pending[-1] -= skipped
            position += skipped
            continue
        pending[-1] -= 1
        items, after = _msgpack_item(data, position)
        position = after
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


def may_hold_big_integers(data: bytes, binary: bool) -> bool:
    """Cheap test: only frames that pass it need :func:`out_of_range_integers`."""
    return _MSGPACK_BIG in data if binary else _LONG_NUMBER in data.translate(_DIGITS)


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
        mapping = cast("dict[Any, Any]", value)
        for key, item in mapping.items():
            yield from out_of_range_integers(item, f"{path}.{key}")
    elif isinstance(value, list | tuple | set | frozenset):
        members = cast("Iterable[Any]", value)
        for index, item in enumerate(members):
            yield from out_of_range_integers(item, f"{path}[{index}]")
