"""A session that read an image, over the protocol: the model gets the picture,
and ``get_session`` still answers within a frame (4 MB by default), its history
without the picture's bytes (the result's text says what it was)."""

from __future__ import annotations

import base64

from protocol.llm import ToolResult
from protocol.session import ToolResultsTurn
from protocol.wire import CreateSession, GetSession, SubmitInput
from tests.image_files import png
from tests.wire.conftest import BOTH_STORES, StartStack, events_until, subscribe

BIG = png(4, 3, noise=b"n" * (4 * 1024 * 1024))
"""Over a frame by itself, under ``max_image_bytes`` (5 MB)."""


@BOTH_STORES
async def test_get_session_leaves_out_image_bytes(start_stack: StartStack) -> None:
    script = {
        "turns": [
            {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "big.png"}}]},
            {"text": "A big picture."},
        ],
        "repeat": False,
    }
    async with start_stack(script) as stack:
        (stack.work / "big.png").write_bytes(BIG)
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="look at big.png")
            await events_until(client, "processing_end")
            detail = await client.request(GetSession, session=session)
        bodies = [request.json() for request in stack.mock.requests]
    (result,) = [r for t in detail.history if isinstance(t, ToolResultsTurn) for r in t.results]
    assert isinstance(result, ToolResult) and result.images == []
    assert f"(image/png, 4x3, {len(BIG)} bytes)" in str(result.content)
    (output,) = [i["output"] for i in bodies[1]["input"] if i["type"] == "function_call_output"]
    (image,) = [part for part in output if part["type"] == "input_image"]
    assert base64.b64decode(image["image_url"].split(",", 1)[1]) == BIG
