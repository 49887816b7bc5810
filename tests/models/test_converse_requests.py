"""What the Bedrock Converse adapter sends, validated strictly against botocore's
service model for ``bedrock-runtime`` (unknown keys, missing members, types, lengths,
unions and enums): every content kind, tools and tool choice, inference settings,
reasoning, structured output, caching."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from actors.models.config import endpoint
from actors.models.converse import ConverseAdapter
from actors.models.converse_request import document_name
from actors.models.errors import InvalidRequestError
from protocol.llm import (
    AudioPart,
    DocumentPart,
    ImagePart,
    Message,
    RedactedThinkingPart,
    Request,
    ResponseFormat,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)
from tests.models.converse_shapes import request_problems

NOVA = "us.amazon.nova-micro-v1:0"
NOVA2 = "us.amazon.nova-2-lite-v1:0"
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
LLAMA = "meta.llama3-3-70b-instruct-v1:0"
PNG = b"\x89PNG\r\n\x1a\nfake"
WEATHER = ToolDefinition(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def history() -> list[Message]:
    """Every kind of part a conversation can carry to Converse."""
    return [
        Message.system("You are terse."),
        Message.developer("Answer in English."),
        Message(
            "user",
            [
                TextPart("What is in these?"),
                ImagePart(data=PNG, media_type="image/png"),
                ImagePart(url="s3://bucket/cat.jpeg", media_type="image/jpeg"),
                DocumentPart(
                    data=b"%PDF-1.4", media_type="application/pdf", file_name="q3.report.pdf"
                ),
                DocumentPart(data=b"plain", media_type="text/plain", file_name="notes.txt"),
                AudioPart(data=b"RIFF", media_type="audio/wav"),
            ],
        ),
        Message(
            "assistant",
            [
                ThinkingPart("Look first.", "sig-1", "bedrock"),
                RedactedThinkingPart(base64.b64encode(b"hidden").decode(), "bedrock"),
                ThinkingPart("Someone else's thought.", "openai-sig", "openai"),
                TextPart("Checking the weather."),
                ToolCall("tooluse_1", "get_weather", {"city": "Paris"}),
                ToolCall("tooluse_2", "get_weather", {"city": "Oslo"}),
            ],
        ),
        Message("tool", [ToolResult("tooluse_1", "18 C, sunny")], tool_call_id="tooluse_1"),
        Message(
            "tool", [ToolResult("tooluse_2", {"temp": -3}, is_error=True)], tool_call_id="tooluse_2"
        ),
        Message.user("And tomorrow?"),
    ]


def build(request: Request, *, stream: bool = False) -> tuple[str, dict[str, Any]]:
    call = ConverseAdapter(
        endpoint("bedrock_converse", "https://bedrock-runtime.us-east-1.amazonaws.com", "k")
    ).build(request, stream=stream)
    return call.url, json.loads(call.body)


def model_of(url: str) -> str:
    from urllib.parse import unquote

    return unquote(url.split("/model/")[1].rsplit("/", 1)[0])


REQUESTS = {
    "everything-nova": Request(
        NOVA2,
        history(),
        tools=[WEATHER],
        temperature=0.2,
        top_p=0.9,
        max_tokens=500,
        stop_sequences=["END"],
        reasoning_effort="low",
        metadata={"user": "u-1"},
    ),
    "everything-claude-thinking": Request(
        CLAUDE, history(), tools=[WEATHER], reasoning_effort="medium", max_tokens=20000
    ),
    "llama-no-cache": Request(LLAMA, history(), tools=[WEATHER]),
    "tool-choice-required": Request(NOVA, history(), [WEATHER], ToolChoice("required")),
    "tool-choice-named": Request(NOVA, history(), [WEATHER], ToolChoice("named", "get_weather")),
    "tool-choice-auto": Request(NOVA, [Message.user("hi")], [WEATHER], ToolChoice("auto")),
    "tool-choice-none-with-history": Request(NOVA, history(), [WEATHER], ToolChoice("none")),
    "tool-choice-none-fresh": Request(NOVA, [Message.user("hi")], [WEATHER], ToolChoice("none")),
    "structured-output": Request(
        CLAUDE,
        [Message.user("a city")],
        response_format=ResponseFormat("json_schema", {"type": "object", "properties": {}}),
    ),
    "bare": Request(NOVA, [Message.user("hello")]),
}


@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse-stream"])
@pytest.mark.parametrize("name", list(REQUESTS))
def test_requests_validate_against_botocores_service_model(name: str, stream: bool) -> None:
    url, body = build(REQUESTS[name], stream=stream)
    assert url.endswith("/converse-stream" if stream else "/converse")
    operation = "ConverseStream" if stream else "Converse"
    assert request_problems(body, model_of(url), operation) == []


def test_the_validator_is_strict() -> None:
    """The check refuses what Bedrock refuses: a stray key, two keys in one content
    block, a tool name off its pattern, an unknown enum value, a missing member."""
    _, body = build(REQUESTS["bare"])
    assert request_problems({**body, "stream": True}, NOVA)
    content = [{"text": "a", "image": {"format": "png", "source": {"bytes": "eA=="}}}]
    assert request_problems({"messages": [{"role": "user", "content": content}]}, NOVA)
    use = [{"toolUse": {"toolUseId": "id", "name": "has space", "input": {}}}]
    assert request_problems({"messages": [{"role": "assistant", "content": use}]}, NOVA)
    image = [{"image": {"format": "bmp", "source": {"bytes": "eA=="}}}]
    assert request_problems({"messages": [{"role": "user", "content": image}]}, NOVA)
    assert request_problems({"messages": [{"content": [{"text": "a"}]}]}, NOVA)


def test_the_request_carries_each_part_as_converse_wants_it() -> None:
    url, body = build(REQUESTS["everything-nova"])
    assert model_of(url) == NOVA2 and "%3A" in url
    assert body["system"] == [
        {"text": "You are terse."},
        {"text": "Answer in English."},
        {"cachePoint": {"type": "default"}},
    ]
    user, assistant, results = body["messages"]  # tool results and the next question merge
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert user["content"][1] == {
        "image": {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}
    }
    assert user["content"][2]["image"]["source"] == {"s3Location": {"uri": "s3://bucket/cat.jpeg"}}
    assert user["content"][3]["document"]["name"] == "q3-report"
    assert user["content"][4]["document"]["format"] == "txt"
    assert user["content"][5]["audio"]["format"] == "wav"
    assert assistant["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "Look first.", "signature": "sig-1"}}
    }
    assert "redactedContent" in assistant["content"][1]["reasoningContent"]
    assert assistant["content"][2] == {"text": "Someone else's thought."}  # not our signature
    assert assistant["content"][4] == {
        "toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}
    }
    assert results["content"][0]["toolResult"] == {
        "toolUseId": "tooluse_1",
        "content": [{"text": "18 C, sunny"}],
        "status": "success",
    }
    assert results["content"][1]["toolResult"]["content"] == [{"json": {"temp": -3}}]
    assert results["content"][1]["toolResult"]["status"] == "error"
    assert results["content"][2] == {"text": "And tomorrow?"}
    assert results["content"][-1] == {"cachePoint": {"type": "default"}}
    assert body["inferenceConfig"] == {
        "maxTokens": 500, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"]
    }  # fmt: skip
    assert body["toolConfig"]["tools"] == [
        {
            "toolSpec": {
                "name": "get_weather",
                "inputSchema": {"json": WEATHER.parameters},
                "description": "The weather in a city.",
            }
        }
    ]  # Nova caches the prompt, not the tools
    assert body["additionalModelRequestFields"] == {
        "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "low"}
    }
    assert body["requestMetadata"] == {"user": "u-1"}
    # Nova 1 models do not reason: the effort is not sent to them.
    _, micro = build(Request(NOVA, [Message.user("hi")], reasoning_effort="low"))
    assert "additionalModelRequestFields" not in micro


def test_tool_choice_thinking_caching_and_structured_output() -> None:
    _, claude = build(REQUESTS["everything-claude-thinking"])
    assert claude["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}
    thinking = claude["additionalModelRequestFields"]["thinking"]
    assert thinking == {"type": "enabled", "budget_tokens": 8192}
    _, llama = build(REQUESTS["llama-no-cache"])
    assert "cachePoint" not in json.dumps(llama)
    assert build(REQUESTS["tool-choice-required"])[1]["toolConfig"]["toolChoice"] == {"any": {}}
    named = build(REQUESTS["tool-choice-named"])[1]["toolConfig"]["toolChoice"]
    assert named == {"tool": {"name": "get_weather"}}
    assert "toolChoice" not in build(REQUESTS["tool-choice-none-with-history"])[1]["toolConfig"]
    assert "toolConfig" not in build(REQUESTS["tool-choice-none-fresh"])[1]
    _, structured = build(REQUESTS["structured-output"])
    schema = structured["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"]
    assert json.loads(schema) == {"type": "object", "properties": {}}


def test_options_override_and_caching_can_be_turned_off() -> None:
    converse = {"auto_cache": False, "performanceConfig": {"latency": "optimized"}}
    invoke = {"thinking": {"type": "enabled", "budget_tokens": 2048}}  # InvokeModel's
    options = {"bedrock_converse": converse, "bedrock": invoke}
    request = Request(CLAUDE, history(), [WEATHER], provider_options=options)
    _, body = build(request)
    assert "cachePoint" not in json.dumps(body)
    assert body["performanceConfig"] == {"latency": "optimized"}
    assert "thinking" not in body
    assert request_problems(body, CLAUDE) == []


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(url="https://example.com/cat.png"),
        DocumentPart(url="https://example.com/a.pdf"),
        ImagePart(data=b"x", media_type="image/tiff"),
        DocumentPart(data=b"x", media_type="application/zip", file_name="a.zip"),
        AudioPart(data=b"x", media_type="audio/x-unknown"),
    ],
)
def test_what_converse_cannot_take_is_refused_not_dropped(part: Any) -> None:
    with pytest.raises(InvalidRequestError, match="bedrock_converse"):
        build(Request(NOVA, [Message("user", [TextPart("see"), part])]))


def test_document_names_follow_converse_rules() -> None:
    assert (
        document_name(DocumentPart(data=b"", file_name="my  file_v2.final.pdf"))
        == "my file-v2-final"
    )
    assert document_name(DocumentPart(data=b"")) == "document"
    assert document_name(DocumentPart(data=b"", file_name="???.pdf")) == "-"
