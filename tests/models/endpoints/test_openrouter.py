"""OpenRouter: reasoning_details kept and sent back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from actors.kernel import Runtime
from actors.mockllm import Reply, serve_mock_llm
from actors.mockllm.replay import JSON, load_replies
from actors.models.endpoints import openrouter_endpoint
from protocol.llm import Message, Request, ThinkingPart
from tests.models.conftest import recorded as recording
from tests.models.endpoints.helpers import collect, session_on

# -- OpenRouter ------------------------------------------------------------------------------

OPENROUTER = "pydantic-ai/tests/models/cassettes/test_openrouter"


def recorded_details(body: bytes) -> tuple[str, list[dict[str, Any]]]:
    """Reasoning text and the details entries, read straight off the recording."""
    text, entries = "", []
    for line in body.decode().splitlines():
        if line.startswith("data: {"):
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices") or ():
                for detail in (choice.get("delta") or {}).get("reasoning_details") or ():
                    entries.append(detail)
                    text += detail.get("text") or ""
    return text, entries


@pytest.mark.parametrize(
    "name",
    ["test_openrouter_streaming_reasoning.yaml", "test_openrouter_stream_with_reasoning.yaml"],
)
async def test_openrouter_reasoning_details_round_trip(runtime: Runtime, name: str) -> None:
    (recorded,) = load_replies(recording(f"{OPENROUTER}/{name}"))
    text, entries = recorded_details(recorded.body)
    follow = Reply(
        200,
        JSON,
        [
            json.dumps(
                {
                    "id": "x",
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "again"},
                        }
                    ],
                }
            ).encode()
        ],
    )
    async with serve_mock_llm(replies=[recorded, follow]) as server:
        ep = openrouter_endpoint("or-key", server.base_url)
        async with session_on(runtime, ep) as session:
            seen = await collect(
                session, Request("m", [Message.user("q")], reasoning_effort="high")
            )
            response = seen[-1].response
            (thinking,) = [p for p in response.message.content if type(p) is ThinkingPart]
            assert thinking.provider == "openrouter"
            assert thinking.text == text
            details = json.loads(thinking.signature or "")
            signatures = [d["signature"] for d in entries if d.get("signature")]
            encrypted = [d["data"] for d in entries if d.get("data")]
            assert [d.get("signature") for d in details if d.get("signature")] == signatures
            assert [d.get("data") for d in details if d.get("data")] == encrypted
            history = [Message.user("q"), response.message, Message.user("more")]
            await session.complete(Request("m", history))
    first, second = (r.json() for r in server.requests)
    assert first["reasoning"] == {"effort": "high"} and "reasoning_effort" not in first
    assistant = second["messages"][1]
    assert assistant["reasoning_details"] == details
    assert "reasoning_content" not in assistant
    assert server.requests[0].headers["authorization"] == "Bearer or-key"
