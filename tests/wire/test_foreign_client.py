"""A client written from docs/protocol.md alone, with the ``websockets`` library
(its synchronous client, run in a worker thread), not Troupe's own client."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from tests.wire.conftest import HANG_GUARD, StartStack, shell_turns

websockets_sync = pytest.importorskip("websockets.sync.client")


def drive(url: str, token: str) -> dict[str, Any]:
    """Everything a third-party client does, in plain JSON frames."""
    with websockets_sync.connect(
        url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10
    ) as ws:
        ws.send(json.dumps({"type": "hello", "version": 1, "client": "websockets-test"}))
        welcome = json.loads(ws.recv(timeout=10))
        assert welcome["type"] == "welcome" and welcome["version"] == 1

        events: list[dict[str, Any]] = []

        def call(frame: dict[str, Any]) -> dict[str, Any]:
            """Send a request; events that arrive before its reply are kept."""
            ws.send(json.dumps(frame))
            while True:
                reply = json.loads(ws.recv(timeout=10))
                if reply["type"] == "event":
                    events.append(reply)
                elif reply.get("id") == frame["id"]:
                    return reply

        created = call({"type": "create_session", "id": "c1"})
        assert created["type"] == "session_created"
        session = created["session"]["session_id"]
        subscribed = call({"type": "subscribe", "id": "s1", "session": session, "after_seq": 0})
        assert subscribed["type"] == "subscribed"
        assert call({"type": "submit", "id": 3, "session": session, "text": "hi"})["type"] == "ok"
        while not events or events[-1]["kind"] != "processing_end":
            frame = json.loads(ws.recv(timeout=10))
            if frame["type"] == "event":
                events.append(frame)
        written = call({"type": "write_file", "id": 4, "environment": "/environments/local",
                        "path": "note.txt", "content": "from a foreign client\n"})  # fmt: skip
        read = call({"type": "read_file", "id": 5, "environment": "/environments/local",
                     "path": "note.txt", "line_numbers": False})  # fmt: skip
        ran = call({"type": "exec", "id": 6, "environment": "/environments/local",
                    "command": "wc -l < note.txt"})  # fmt: skip
        missing = call({"type": "read_file", "id": 7, "environment": "/environments/local",
                        "path": "nope.txt"})  # fmt: skip
        return {"events": events, "written": written, "read": read, "ran": ran,
                "missing": missing}  # fmt: skip


async def test_a_client_written_from_the_docs(start_stack: StartStack) -> None:
    async with start_stack(shell_turns("echo foreign")) as stack:
        with trio.fail_after(HANG_GUARD):
            result = await trio.to_thread.run_sync(drive, stack.url, stack.token)
    kinds = [e["kind"] for e in result["events"]]
    assert kinds[0] == "session_start" and kinds[-1] == "processing_end"
    outputs = [e["data"]["output"] for e in result["events"] if e["kind"] == "tool_call_end"]
    assert outputs[0].startswith("foreign")
    assert result["written"]["type"] == "file_written"
    assert result["read"]["content"]["text"] == "from a foreign client"
    assert result["ran"]["result"]["stdout"].strip() == "1"
    assert (result["missing"]["type"], result["missing"]["code"]) == ("error", "file_not_found")
