"""Scripted conversations: several sessions served from one script, in any order."""

from __future__ import annotations

import pytest

from actors.mockllm import Conversation, Script, Turn
from protocol.llm import Message, Request, ToolCall
from tests.models.conftest import WIRES, Connect


@pytest.mark.parametrize("wire", WIRES)
async def test_each_conversation_follows_its_own_turns(connect: Connect, wire: str) -> None:
    script = Script(
        conversations=[
            Conversation("task A", [Turn(text="A first"), Turn(text="A second")]),
            Conversation("task B", [Turn(text="B first"), Turn(text="B second")]),
        ],
        turns=[Turn(text="fallback")],
    )
    async with connect(wire, script) as (_, session):

        async def ask(*messages: Message) -> str:
            response = await session.complete(Request(model="m", messages=list(messages)))
            return response.text

        # B's first turn arrives before A's: the order of requests does not matter.
        assert await ask(Message.user("do task B")) == "B first"
        assert await ask(Message.user("do task A")) == "A first"
        follow_up = Message("assistant", [ToolCall("c1", "noop", {})])
        result = Message.tool_result("c1", "ok", name="noop")
        assert await ask(Message.user("do task A"), follow_up, result) == "A second"
        assert await ask(Message.user("something else")) == "fallback"
