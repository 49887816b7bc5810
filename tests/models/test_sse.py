"""The SSE parser: framing, line endings, chunk boundaries anywhere, bad input."""

from __future__ import annotations

import pytest

from actors.models.errors import StreamError
from actors.models.sse import SSEEvent, SSEParser

STREAM = (
    b": a comment\n"
    b"event: message_start\n"
    b'data: {"a": 1}\n'
    b"\n"
    b"data: first line\n"
    b"data: second line\n"
    b"id: 7\n"
    b"retry: 100\n"
    b"\n"
    b"event: done\r\n"
    b"data:no-space\r\n"
    b"\r\n"
)
EXPECTED = [
    SSEEvent("message_start", b'{"a": 1}'),
    SSEEvent("message", b"first line\nsecond line", "7"),
    SSEEvent("done", b"no-space", "7"),
]


def parse(chunks: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + list(parser.close())


def test_whole_stream() -> None:
    assert parse([STREAM]) == EXPECTED


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13])
def test_any_chunk_boundary_gives_the_same_events(size: int) -> None:
    chunks = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
    assert parse(chunks) == EXPECTED


def test_crlf_split_between_chunks_is_one_line_ending() -> None:
    assert parse([b"data: x\r", b"\n\r", b"\n"]) == [SSEEvent("message", b"x")]


def test_cr_only_line_endings() -> None:
    assert parse([b"data: a\r\rdata: b\r\r"]) == [
        SSEEvent("message", b"a"),
        SSEEvent("message", b"b"),
    ]


def test_last_event_without_blank_line_is_delivered() -> None:
    assert parse([b"data: tail"]) == [SSEEvent("message", b"tail")]


def test_blank_lines_alone_make_no_event() -> None:
    assert parse([b"\n\n\n: ping\n\n"]) == []


def test_event_name_that_is_not_utf8_is_a_stream_error() -> None:
    with pytest.raises(StreamError, match="not UTF-8"):
        parse([b"event: \xff\xfe\n\n"])
