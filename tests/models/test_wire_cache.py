"""A round costs only what is new: each adapter converts a history message once.

The body an adapter builds from its cache must be byte for byte the body a fresh
adapter builds from nothing, round after round, and after the history is edited.
"""

from __future__ import annotations

import msgspec
import pytest

from actors.models.config import Wire, endpoint
from actors.models.registry import adapter_for
from actors.models.wire_cache import ConversationCache
from protocol.llm import (
    Message,
    Request,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
)
from tests.models.conftest import WIRES

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def _round(number: int, provider: str) -> list[Message]:
    call = ToolCall(f"call_{number}", "read_file", {"path": f"{number}.txt"})
    thinking = ThinkingPart(f"think {number}", "U2ln", provider, f"rs_{number}")
    return [
        Message("assistant", [thinking, TextPart(f"reading {number}"), call]),
        Message.tool_result(call.id, f"contents of {number}", name="read_file"),
    ]


def _request(history: list[Message], wire: Wire) -> Request:
    # The session rebuilds its system message on every round: a new object each time.
    tools = [ToolDefinition("read_file", "Read a file.", SCHEMA)]
    return Request("m", [Message.system("Be terse."), *history], tools=tools)


def _fresh(wire: Wire, request: Request) -> bytes:
    return adapter_for(endpoint(wire, "http://127.0.0.1:9", "k")).build(request, stream=True).body


def _provider(wire: Wire) -> str:
    return {"openai_responses": "openai", "openai_chat": "openai_chat"}.get(wire, wire)


@pytest.mark.parametrize("wire", WIRES)
def test_each_message_is_converted_once_and_bodies_stay_exact(wire: Wire) -> None:
    adapter = adapter_for(endpoint(wire, "http://127.0.0.1:9", "k"))
    history = [Message.user("start")]
    sent = 0
    body = b""
    for number in range(30):
        before = adapter.cache.converted
        request = _request(history, wire)
        body = adapter.build(request, stream=True).body
        assert body == _fresh(wire, request)
        assert adapter.cache.converted - before == len(history) - sent  # only the new ones
        sent = len(history)
        history = [*history, *_round(number, _provider(wire))]
        if number % 7 == 3:
            history.append(Message.user(f"steer {number}"))  # merges with the results
    assert msgspec.json.decode(body)  # valid JSON


@pytest.mark.parametrize("wire", WIRES)
def test_an_edited_history_is_converted_afresh(wire: Wire) -> None:
    adapter = adapter_for(endpoint(wire, "http://127.0.0.1:9", "k"))
    history = [Message.user("start"), *_round(1, _provider(wire)), *_round(2, _provider(wire))]
    adapter.build(_request(history, wire), stream=True)
    edited = [history[0], *_round(7, _provider(wire)), *history[3:]]
    request = _request(edited, wire)
    assert adapter.build(request, stream=True).body == _fresh(wire, request)
    shorter = _request(history[:2], wire)
    assert adapter.build(shorter, stream=True).body == _fresh(wire, shorter)


@pytest.mark.parametrize("wire", WIRES)
def test_the_cache_stays_within_its_byte_bound(wire: Wire) -> None:
    adapter = adapter_for(endpoint(wire, "http://127.0.0.1:9", "k"))
    adapter.cache = ConversationCache(max_bytes=4096)
    conversations = [[Message.user(f"conversation {n}")] for n in range(20)]
    for _ in range(5):
        for index, history in enumerate(conversations):
            history += _round(index, _provider(wire))
            request = _request(history, wire)
            assert adapter.build(request, stream=True).body == _fresh(wire, request)
            assert adapter.cache.size_bytes <= 4096
