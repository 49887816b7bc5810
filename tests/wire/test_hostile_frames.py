"""Frames that used to close the connection with no error (issue 20, item 1): each
gets an ``error`` frame naming the problem, and the same connection then completes
a ``list_sessions``. JSON and msgpack alike."""

from __future__ import annotations

import json

import msgspec
import pytest
import trio
from trio_websocket import open_websocket_url

from protocol.wire import MAX_NESTING
from tests.wire.conftest import HANG_GUARD, StartStack

DEEP = 1000
BIG = 2**63  # one past the largest signed 64-bit integer
JSON_FRAMES = [
    ("json_nested_array", "[" * DEEP + "]" * DEEP, "bad_frame", None, "nests deeper"),
    ("json_nested_in_a_field", '{"type":"list_sessions","id":1,"x":' + "[" * DEEP + "]" * DEEP
     + "}", "bad_frame", None, "nests deeper"),
    ("json_nested_objects", '{"a":' * DEEP + "1" + "}" * DEEP, "bad_frame", None, "nests deeper"),
    ("json_lone_surrogate", '{"type":"get_session","id":7,"session":"\\ud800"}',
     "invalid_request", 7, "surrogate"),
    ("json_after_seq_past_64_bits", json.dumps({"type": "subscribe", "id": 8, "session": "s-x",
     "after_seq": BIG}), "invalid_request", 8, "$.after_seq"),
    ("json_config_integer_past_64_bits", json.dumps({"type": "create_session", "id": 9,
     "config": {"max_turns": 2**64}}), "invalid_request", 9, "$.config.max_turns"),
    ("json_limit_dict_past_64_bits", json.dumps({"type": "create_session", "id": 10,
     "config": {"tool_output_limits": {"shell": -(2**63) - 1}}}), "invalid_request", 10,
     "$.config.tool_output_limits.shell"),
    ("json_id_past_64_bits", json.dumps({"type": "list_sessions", "id": 2**70}),
     "invalid_request", None, "$.id"),
    ("json_timeout_past_64_bits", json.dumps({"type": "exec", "id": "t", "environment": "local",
     "command": "true", "timeout_ms": BIG}), "invalid_request", "t", "$.timeout_ms"),
]  # fmt: skip
MSGPACK_FRAMES = [
    ("msgpack_nested_array", b"\x91" * DEEP + b"\x90", "bad_frame", None, "nests deeper"),
    ("msgpack_nested_in_a_field", msgspec.msgpack.encode({"type": "list_sessions", "id": 1})
     .replace(b"\x82", b"\x83", 1) + b"\xa1x" + b"\x91" * DEEP + b"\x90", "bad_frame", None,
     "nests deeper"),
    ("msgpack_invalid_utf8", msgspec.msgpack.encode({"type": "get_session", "id": 3,
     "session": "xy"}).replace(b"\xa2xy", b"\xa2\xff\xfe"), "bad_frame", None, "UTF-8"),
    ("msgpack_after_seq_past_64_bits", msgspec.msgpack.encode({"type": "subscribe", "id": 4,
     "session": "s-x", "after_seq": 2**64 - 1}), "invalid_request", 4, "$.after_seq"),
    ("msgpack_config_integer_past_64_bits", msgspec.msgpack.encode({"type": "create_session",
     "id": 5, "config": {"max_turns": 2**64 - 1}}), "invalid_request", 5, "$.config.max_turns"),
    ("msgpack_id_past_64_bits", msgspec.msgpack.encode({"type": "list_sessions", "id": 2**64 - 1}),
     "invalid_request", None, "$.id"),
]  # fmt: skip


async def _open(stack, encoding: str):
    ws_context = open_websocket_url(
        stack.url, extra_headers=[(b"authorization", f"Bearer {stack.token}".encode())]
    )
    ws = await ws_context.__aenter__()
    await ws.send_message(json.dumps({"type": "hello", "version": 1, "encoding": encoding}))
    assert json.loads(await ws.get_message())["type"] == "welcome"
    return ws_context, ws


def _decode(message: str | bytes) -> dict:
    return json.loads(message) if isinstance(message, str) else msgspec.msgpack.decode(message)


def _list_sessions(encoding: str) -> str | bytes:
    frame = {"type": "list_sessions", "id": "after"}
    return json.dumps(frame) if encoding == "json" else msgspec.msgpack.encode(frame)


@pytest.mark.parametrize(
    ("encoding", "frame", "code", "request_id", "named"),
    [("json", *case[1:]) for case in JSON_FRAMES]
    + [("msgpack", *case[1:]) for case in MSGPACK_FRAMES],
    ids=[case[0] for case in JSON_FRAMES + MSGPACK_FRAMES],
)  # fmt: skip
async def test_a_hostile_frame_gets_an_error_and_the_connection_lives(
    start_stack: StartStack, encoding: str, frame, code: str, request_id, named: str
) -> None:
    async with start_stack() as stack:
        ws_context, ws = await _open(stack, encoding)
        try:
            with trio.fail_after(HANG_GUARD):
                await ws.send_message(frame)
                reply = _decode(await ws.get_message())
                assert reply["type"] == "error", reply
                assert (reply["code"], reply["id"]) == (code, request_id), reply
                assert named in reply["message"], reply
                await ws.send_message(_list_sessions(encoding))
                listed = _decode(await ws.get_message())
                assert listed == {"type": "session_list", "id": "after", "sessions": []}
        finally:
            await ws_context.__aexit__(None, None, None)


async def test_the_nesting_limit_is_the_documented_one(start_stack: StartStack) -> None:
    inside = {"type": "list_sessions", "id": 1}
    async with start_stack() as stack:
        ws_context, ws = await _open(stack, "json")
        try:
            with trio.fail_after(HANG_GUARD):
                for depth, answer in ((MAX_NESTING, "session_list"), (MAX_NESTING + 1, "error")):
                    # the frame object is level 1, so the extra field adds depth - 1 levels
                    extra = "[" * (depth - 1) + "]" * (depth - 1)
                    text = json.dumps(inside)[:-1] + f', "extra": {extra}}}'
                    await ws.send_message(text)
                    assert _decode(await ws.get_message())["type"] == answer, depth
        finally:
            await ws_context.__aexit__(None, None, None)
