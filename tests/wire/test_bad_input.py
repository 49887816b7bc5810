"""Bad frames, bad tokens and foreign origins: refused clearly, and the server keeps
serving everyone else."""

from __future__ import annotations

import json
import os
import stat

import pytest
import trio
from trio_websocket import ConnectionClosed, ConnectionRejected, open_websocket_url

from protocol.client import ConnectionRefused, connect
from protocol.wire import (
    CLOSE_EXPECTED_HELLO,
    CLOSE_TOO_BIG,
    CLOSE_UNAUTHORIZED,
    CLOSE_VERSION_MISMATCH,
    ListSessions,
)
from tests.wire.conftest import HANG_GUARD, StartStack


async def raw(stack, token: str | None = None, origin: str | None = None, **options):
    headers = []
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return open_websocket_url(stack.url, extra_headers=headers, **options)


async def hello(ws, **fields) -> dict:
    await ws.send_message(json.dumps({"type": "hello", "version": 1, **fields}))
    return json.loads(await ws.get_message())


async def test_bad_frames_get_errors_and_the_connection_lives(start_stack: StartStack) -> None:
    async with start_stack() as stack, await raw(stack, stack.token) as ws:
        assert (await hello(ws))["type"] == "welcome"
        cases = [
            ("{not json", "bad_frame", None),
            (json.dumps({"type": "submit", "id": 5, "session": 3, "text": "x"}),
             "invalid_request", 5),
            (json.dumps({"type": "launch_missiles", "id": "m"}), "unknown_type", "m"),
            (json.dumps({"id": 9, "session": "s"}), "invalid_request", 9),
            (json.dumps([1, 2, 3]), "invalid_request", None),
            (b"\x00\xff\xfe garbage", "bad_frame", None),
            (json.dumps({"type": "hello", "version": 1}), "bad_frame", None),
        ]  # fmt: skip
        with trio.fail_after(HANG_GUARD):
            for frame, code, request_id in cases:
                await ws.send_message(frame)
                reply = json.loads(await ws.get_message())
                assert reply["type"] == "error", frame
                assert (reply["code"], reply["id"]) == (code, request_id), reply
                assert reply["message"]
            await ws.send_message(json.dumps({"type": "list_sessions", "id": 1}))
            assert json.loads(await ws.get_message()) == {
                "type": "session_list", "id": 1, "sessions": []
            }  # fmt: skip


async def test_an_oversized_frame_closes_only_that_connection(start_stack: StartStack) -> None:
    async with start_stack(max_frame_bytes=64 * 1024) as stack, stack.client() as other:
        async with await raw(stack, stack.token) as ws:
            await hello(ws)
            big = json.dumps({"type": "submit", "id": 1, "session": "s", "text": "x" * 200_000})
            with trio.fail_after(HANG_GUARD), pytest.raises(ConnectionClosed) as closed:
                await ws.send_message(big)
                await ws.get_message()
            assert closed.value.reason is not None
            assert closed.value.reason.code == CLOSE_TOO_BIG
        assert (await other.request(ListSessions)).sessions == []


async def test_tokens_and_origins(start_stack: StartStack) -> None:
    async with start_stack() as stack:
        mode = stat.S_IMODE(os.stat(stack.server.token_file).st_mode)
        assert mode == 0o600
        with pytest.raises(ConnectionRejected) as rejected:
            async with await raw(stack, "wrong-token"):
                pass
        assert rejected.value.status_code == 401
        with pytest.raises(ConnectionRejected) as rejected:
            async with await raw(stack, stack.token, origin="https://evil.example"):
                pass
        assert rejected.value.status_code == 403
        port = stack.server.port
        for own in (
            f"http://localhost:{port}",
            f"http://127.0.0.1:{port}/",
            f"http://[::1]:{port}",
        ):
            async with await raw(stack, origin=own) as ws:
                reply = await hello(ws, token=stack.token)  # a browser: token in the hello
                assert reply["type"] == "welcome", own
        others = ("http://localhost:5173", f"http://127.0.0.1:{port + 1}",
                  f"https://evil.example:{port}", "null", f"ftp://127.0.0.1:{port}")  # fmt: skip
        for other in others:
            with pytest.raises(ConnectionRejected) as rejected:
                async with await raw(stack, stack.token, origin=other):
                    pass
            assert rejected.value.status_code == 403, other
        for fields, close_code, error in [
            ({}, CLOSE_UNAUTHORIZED, "unauthorized"),
            ({"token": "nope"}, CLOSE_UNAUTHORIZED, "unauthorized"),
            ({"token": stack.token, "version": 99}, CLOSE_VERSION_MISMATCH, "version_mismatch"),
        ]:
            async with await raw(stack) as ws:
                reply = await hello(ws, **fields)
                assert (reply["type"], reply["code"]) == ("error", error)
                with trio.fail_after(HANG_GUARD), pytest.raises(ConnectionClosed) as closed:
                    await ws.get_message()
                assert closed.value.reason is not None
            assert closed.value.reason.code == close_code
        async with await raw(stack, stack.token) as ws:
            await ws.send_message(json.dumps({"type": "list_sessions", "id": 1}))
            reply = json.loads(await ws.get_message())
            assert reply["code"] == "bad_frame"
            with trio.fail_after(HANG_GUARD), pytest.raises(ConnectionClosed) as closed:
                await ws.get_message()
            assert closed.value.reason is not None
            assert closed.value.reason.code == CLOSE_EXPECTED_HELLO
        with pytest.raises(ConnectionRefused):
            async with connect(stack.url, "bad", header_token=False):
                pass


async def test_an_origin_the_user_lists_is_admitted(start_stack: StartStack) -> None:
    async with start_stack(origins=frozenset({"http://localhost:5173"})) as stack:
        async with await raw(stack, origin="http://localhost:5173") as ws:
            assert (await hello(ws, token=stack.token))["type"] == "welcome"
        with pytest.raises(ConnectionRejected) as rejected:
            async with await raw(stack, stack.token, origin="http://localhost:5174"):
                pass
        assert rejected.value.status_code == 403
