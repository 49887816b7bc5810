"""A session over AWS Bedrock's Converse wire, end to end: the scripted provider
speaks Converse (event-stream frames), the session runs a real tool round in a
LocalEnvironment, and every request it sent is a valid ConverseStream request by
botocore's service model for ``bedrock-runtime``."""

from __future__ import annotations

from urllib.parse import unquote

from protocol.events import AssistantTextEndEvent, ToolCallEndEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns

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
