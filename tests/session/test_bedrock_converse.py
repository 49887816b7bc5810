"""A session over AWS Bedrock's Converse wire, end to end: the scripted provider
speaks Converse (event-stream frames), the session runs a real tool round in a
LocalEnvironment, and every request it sent is a valid ConverseStream request by
botocore's service model for ``bedrock-runtime``. And a session falling back to
Converse from another wire, its history converted."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

import pytest

from actors.mockllm import Fault, Script, ToolCallSpec, Turn
from protocol.events import AssistantTextEndEvent, ModelFallbackEvent, ToolCallEndEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns
from tests.session.test_fallback import run, session_on

NOVA = "us.amazon.nova-pro-v1:0"


async def test_a_tool_round_over_bedrock_converse(start_agent: StartAgent) -> None:
    from tests.models.converse_shapes import request_problems  # skips without botocore

    script = turns([call("write_file", file_path="notes.txt", content="from nova\n")], "Written.")
    config = SessionConfig(model=NOVA)
    async with start_agent("anthropic", script, config, wire="bedrock_converse") as agent:
        await agent.run("write notes.txt")
        assert (agent.workdir / "notes.txt").read_text() == "from nova\n"
        ended = agent.of(ToolCallEndEvent)
        assert [e.tool_name for e in ended] == ["write_file"] and not ended[0].is_error
        assert agent.of(AssistantTextEndEvent)[-1].text == "Written."
    first, second = agent.server.requests
    for sent in (first, second):
        assert sent.path == "/model/us.amazon.nova-pro-v1%3A0/converse-stream"
        model = unquote(sent.path.split("/model/")[1].rsplit("/", 1)[0])
        assert request_problems(sent.json(), model, "ConverseStream") == []
    names = {tool["toolSpec"]["name"] for tool in first.json()["toolConfig"]["tools"]}
    assert "write_file" in names
    results = [
        block["toolResult"]
        for message in second.json()["messages"]
        for block in message["content"]
        if "toolResult" in block
    ]
    assert len(results) == 1 and results[0]["status"] == "success"
    assert results[0]["toolUseId"] == ended[0].call_id


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = Path(os.path.realpath(tmp_path)) / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    return work


async def test_a_fallback_to_bedrock_converse_carries_the_history_over(workdir: Path) -> None:
    """OpenAI Responses answers with reasoning and a tool call, then fails; the session
    goes on over Converse with the history converted: OpenAI's reasoning as text, the
    call and its result as toolUse / toolResult, valid by botocore's service model."""
    from tests.models.converse_shapes import request_problems

    first = Script(
        [
            Turn(
                reasoning="Look at the file first.",
                tool_calls=[ToolCallSpec("read_file", {"file_path": "a.txt"})],
            ),
            Turn(fault=Fault(status=503, message="overloaded")),
        ]
    )
    second = Script([Turn(text="Done on Bedrock.")])
    async with session_on(workdir, first, second, second_wire="bedrock_converse") as (
        ref,
        _,
        backup,
        seen,
    ):
        await run(ref, "read a.txt")
    switched = [e.data.to_wire for e in seen if isinstance(e.data, ModelFallbackEvent)]
    assert switched == ["bedrock_converse"]
    texts = [e.data.text for e in seen if isinstance(e.data, AssistantTextEndEvent) and e.data.text]
    assert texts == ["Done on Bedrock."]
    (sent,) = backup.requests
    assert sent.path == "/model/claude-fallback/converse-stream"
    body = sent.json()
    assert request_problems(body, "claude-fallback", "ConverseStream") == []
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assistant = body["messages"][1]["content"]
    assert assistant[0] == {"text": "Look at the file first."}  # not OpenAI's signature
    use = assistant[1]["toolUse"]
    assert use["name"] == "read_file" and use["input"] == {"file_path": "a.txt"}
    result = body["messages"][2]["content"][0]["toolResult"]
    assert result["toolUseId"] == use["toolUseId"] and "alpha" in str(result["content"])
