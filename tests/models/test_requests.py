"""Requests in each provider's wire format: roles, tools, and what must round-trip
byte for byte (thinking signatures, Gemini's thoughtSignature, encrypted reasoning)."""

from __future__ import annotations

import msgspec
import pytest
import trio

from actors.mockllm import Reply, Script, ToolCallSpec, Turn
from actors.models import ConfigurationError, endpoint_from_env
from actors.models.config import Wire, endpoint
from actors.models.gemini import new_call_id
from actors.models.registry import adapter_for
from protocol.llm import (
    Finish,
    Message,
    RedactedThinkingPart,
    Request,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)
from tests.models.conftest import HANG_GUARD, WIRES, Connect

TOOL = ToolDefinition(
    "read_file",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
CALL = ToolCall("call_1", "read_file", {"path": "a.txt"}, '{"path":"a.txt"}')
HISTORY = [
    Message.system("You are terse."),
    Message.developer("Prefer tools."),
    Message.user("Read a.txt"),
    Message(
        "assistant",
        [
            ThinkingPart("I should read it.", "sig/with+exact==bytes", "anthropic"),
            RedactedThinkingPart("opaque-redacted-data", "anthropic"),
            TextPart("Reading."),
            CALL,
        ],
    ),
    Message.tool_result("call_1", "hello world"),
    Message.user("Thanks"),
]


def body(wire: Wire, request: Request, *, stream: bool = True) -> dict:
    call = adapter_for(endpoint(wire, "http://127.0.0.1:9", "key-1")).build(request, stream=stream)
    return msgspec.json.decode(call.body)


def test_anthropic_round_trips_thinking_and_merges_turns() -> None:
    request = Request(
        "claude",
        HISTORY,
        tools=[TOOL],
        provider_options={"anthropic": {"beta_headers": ["a-1", "b-2"]}},
    )
    call = adapter_for(endpoint("anthropic", "http://h", "key-1")).build(request, stream=True)
    data = msgspec.json.decode(call.body)
    assert call.url == "http://h/v1/messages"
    assert call.headers["x-api-key"] == "key-1"
    assert call.headers["anthropic-beta"] == "a-1,b-2,prompt-caching-2024-07-31"
    assert [block["text"] for block in data["system"]] == ["You are terse.", "Prefer tools."]
    assert data["max_tokens"] == 4096 and data["stream"] is True
    assistant = data["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should read it.",
        "signature": "sig/with+exact==bytes",
    }
    assert assistant["content"][1] == {"type": "redacted_thinking", "data": "opaque-redacted-data"}
    assert assistant["content"][3] == {
        "type": "tool_use",
        "id": "call_1",
        "name": "read_file",
        "input": {"path": "a.txt"},
    }
    user = data["messages"][2]  # the tool result and the next user turn, merged
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "user"]
    assert user["content"][0]["type"] == "tool_result"
    assert user["content"][0]["tool_use_id"] == "call_1"
    assert user["content"][1]["text"] == "Thanks"
    # prompt caching: system, tools and the conversation prefix
    assert data["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert data["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert user["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "beta_headers" not in data


def test_anthropic_options_tool_choice_none_and_no_cache() -> None:
    request = Request(
        "claude",
        [Message.user("hi")],
        tools=[TOOL],
        tool_choice=ToolChoice("none"),
        provider_options={"anthropic": {"auto_cache": False, "thinking": {"type": "enabled"}}},
    )
    data = body("anthropic", request)
    assert "tools" not in data
    assert "cache_control" not in str(data)
    assert data["thinking"] == {"type": "enabled"}


def test_anthropic_reasoning_effort_becomes_a_thinking_budget() -> None:
    high = body("anthropic", Request("claude", [Message.user("q")], reasoning_effort="high"))
    low = body("anthropic", Request("claude", [Message.user("q")], reasoning_effort="low"))
    assert high["thinking"]["budget_tokens"] > low["thinking"]["budget_tokens"] >= 1024
    assert high["max_tokens"] > high["thinking"]["budget_tokens"]
    tight = Request("claude", [Message.user("q")], reasoning_effort="high", max_tokens=1500)
    assert "thinking" not in body("anthropic", tight)  # no room to think within the limit
    explicit = Request(
        "claude",
        [Message.user("q")],
        reasoning_effort="high",
        provider_options={"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 5000}}},
    )
    assert body("anthropic", explicit)["thinking"]["budget_tokens"] == 5000


def test_foreign_signatures_are_not_sent_to_another_provider() -> None:
    message = Message("assistant", [ThinkingPart("gemini thought", "gsig", "gemini")])
    data = body("anthropic", Request("claude", [Message.user("q"), message]))
    assert data["messages"][1]["content"][0] == {
        "type": "text",
        "text": "gemini thought",
        "cache_control": {"type": "ephemeral"},
    }


def test_openai_responses_items() -> None:
    history = [
        *HISTORY[:3],
        Message(
            "assistant",
            [ThinkingPart("summary", "encrypted-blob", "openai", "rs_1"), TextPart("ok"), CALL],
        ),
        *HISTORY[4:],
    ]
    request = Request(
        "gpt", history, tools=[TOOL], reasoning_effort="high", reasoning_summary="auto"
    )
    data = body("openai_responses", request)
    assert data["instructions"] == "You are terse."
    kinds = [item.get("type") for item in data["input"]]
    assert kinds == [
        "message",
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert data["input"][0]["role"] == "developer"
    assert data["input"][2] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "summary"}],
        "encrypted_content": "encrypted-blob",
    }
    assert data["input"][4]["arguments"] == '{"path":"a.txt"}'
    assert data["input"][5] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "hello world",
    }
    assert data["reasoning"] == {"effort": "high", "summary": "auto"}
    assert data["include"] == ["reasoning.encrypted_content"]
    assert data["tools"][0]["name"] == "read_file" and data["store"] is False


def test_openai_chat_messages() -> None:
    data = body("openai_chat", Request("llama", HISTORY, tools=[TOOL], reasoning_effort="low"))
    roles = [m["role"] for m in data["messages"]]
    assert roles == ["system", "developer", "user", "assistant", "tool", "user"]
    assistant = data["messages"][3]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path":"a.txt"}',
    }
    assert data["messages"][4] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "hello world",
    }
    assert data["stream_options"] == {"include_usage": True}
    assert data["reasoning_effort"] == "low"


def test_gemini_maps_results_to_names_and_echoes_signatures() -> None:
    synthetic = new_call_id()  # made up by the adapter: not sent back
    call = ToolCall(synthetic, "read_file", {"path": "a.txt"}, signature="thought-sig")
    history = [
        Message.system("sys"),
        Message.user("q"),
        Message("assistant", [ThinkingPart("hmm", None, "gemini"), call]),
        Message.tool_result(synthetic, "contents"),
    ]
    request = Request(
        "gemini-3", history, tools=[TOOL], tool_choice=ToolChoice("named", "read_file")
    )
    adapter = adapter_for(endpoint("gemini", "http://h", "gkey"))
    http = adapter.build(request, stream=True)
    data = msgspec.json.decode(http.body)
    assert http.url == "http://h/v1beta/models/gemini-3:streamGenerateContent?alt=sse"
    assert http.headers["x-goog-api-key"] == "gkey"
    assert data["systemInstruction"] == {"parts": [{"text": "sys"}]}
    model = data["contents"][1]
    assert model["role"] == "model"
    assert model["parts"][1] == {
        "functionCall": {"name": "read_file", "args": {"path": "a.txt"}},
        "thoughtSignature": "thought-sig",
    }
    assert data["contents"][2]["parts"][0] == {
        "functionResponse": {"name": "read_file", "response": {"result": "contents"}}
    }
    assert data["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}
    }


def test_gemini_echoes_the_function_call_ids_it_was_given() -> None:
    call = ToolCall("fc-7f3a", "read_file", {"path": "a.txt"})
    history = [
        Message.user("q"),
        Message("assistant", [call]),
        Message.tool_result("fc-7f3a", "contents", name="read_file"),
    ]
    adapter = adapter_for(endpoint("gemini", "http://h", "gkey"))
    data = msgspec.json.decode(adapter.build(Request("gemini-3", history), stream=True).body)
    assert data["contents"][1]["parts"][0]["functionCall"]["id"] == "fc-7f3a"
    assert data["contents"][2]["parts"][0]["functionResponse"]["id"] == "fc-7f3a"


@pytest.mark.parametrize("wire", ["anthropic", "gemini", "openai_responses"])
async def test_signatures_from_a_real_stream_go_back_exactly(wire: str, connect: Connect) -> None:
    turn = Turn(
        reasoning="deep thought",
        signature="Sig+/w==",  # base64, as real signatures are (google-genai decodes them)
        tool_calls=[ToolCallSpec("read_file", {"path": "x"})],
    )
    async with connect(wire, Script([turn, Turn(text="done")])) as (server, session):
        request = Request("m", [Message.user("go")], tools=[TOOL])
        with trio.fail_after(HANG_GUARD):
            async with session.stream(request) as events:
                finish = [e async for e in events][-1]
            assert type(finish) is Finish
            reply = finish.response.message
            call = finish.response.tool_calls[0]
            follow = Request(
                "m",
                [*request.messages, reply, Message.tool_result(call.id, "file body")],
                tools=[TOOL],
            )
            assert (await session.complete(follow)).text == "done"
    sent = server.requests[1].body.decode()
    assert "Sig+/w==" in sent
    assert "file body" in sent
    if wire == "gemini":
        assert '"functionResponse":{"name":"read_file"' in sent


# Gemini always sends arguments as JSON objects, and so do Anthropic's and Converse's
# complete answers: only argument *text* can be broken.
TEXT_ARGUMENTS = [
    (wire, mode)
    for wire in WIRES
    for mode in ("complete", "stream")
    if wire != "gemini"
    and (wire, mode) not in (("anthropic", "complete"), ("bedrock_converse", "complete"))
]


@pytest.mark.parametrize(("wire", "mode"), TEXT_ARGUMENTS)
async def test_invalid_json_in_tool_arguments_is_flagged_not_fatal(
    wire: str, mode: str, connect: Connect
) -> None:
    broken = Turn(tool_calls=[ToolCallSpec("read_file", '{"path": "a.txt"')])
    async with connect(wire, Script([broken])) as (_, session):
        request = Request("m", [Message.user("go")])
        with trio.fail_after(HANG_GUARD):
            if mode == "complete":
                response = await session.complete(request)
            else:
                async with session.stream(request) as events:
                    response = [e async for e in events][-1].response  # type: ignore[union-attr]
    call = response.tool_calls[0]
    assert call.name == "read_file"
    assert call.arguments == {}
    assert call.raw_arguments == '{"path": "a.txt"'
    assert call.arguments_error is not None and "invalid JSON" in call.arguments_error


def test_tool_result_part_is_a_tool_message() -> None:
    message = Message.tool_result("c1", {"rows": 3}, is_error=True)
    assert message.role == "tool" and message.tool_call_id == "c1"
    assert message.content == [ToolResult("c1", {"rows": 3}, True)]


def test_configuration_from_the_environment() -> None:
    env = {"GOOGLE_API_KEY": "g", "GEMINI_BASE_URL": "http://localhost:8080"}
    gemini = endpoint_from_env("gemini", env)
    assert gemini.api_key == "g" and gemini.base_url == "http://localhost:8080/v1beta"
    local = endpoint_from_env("openai_chat", {"OPENAI_BASE_URL": "http://localhost:11434/v1"})
    assert local.api_key == "" and local.base_url == "http://localhost:11434/v1"
    anthropic = endpoint_from_env("anthropic", {"ANTHROPIC_API_KEY": "a"}, max_concurrency=3)
    assert anthropic.base_url == "https://api.anthropic.com/v1" and anthropic.max_concurrency == 3
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        endpoint_from_env("openai_responses", {})


@pytest.mark.parametrize("mode", ["complete", "stream"])
async def test_chat_tool_calls_without_an_id_get_one(mode: str, connect: Connect) -> None:
    """Some local servers send tool calls with no id; each gets a unique one, which the
    tool result then answers."""
    call = {"type": "function", "function": {"name": "read_file", "arguments": '{"path":"a"}'}}
    if mode == "stream":
        chunk = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, **call}, ]}, "finish_reason": None}]}  # fmt: skip
        second = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, **call}, ]}, "finish_reason": "tool_calls"}]}  # fmt: skip
        frames = [b"data: " + msgspec.json.encode(c) + b"\n\n" for c in (chunk, second)]
        reply = Reply(200, "text/event-stream", [*frames, b"data: [DONE]\n\n"])
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [call, call]}
        body = {"id": "c", "model": "m", "choices": [{"index": 0, "message": message}]}
        reply = Reply(200, "application/json", [msgspec.json.encode(body)])
    async with connect("openai_chat", replies=[reply]) as (_, session):
        request = Request("m", [Message.user("go")])
        with trio.fail_after(HANG_GUARD):
            if mode == "stream":
                async with session.stream(request) as events:
                    response = [e async for e in events][-1].response  # type: ignore[union-attr]
            else:
                response = await session.complete(request)
    ids = [c.id for c in response.tool_calls]
    assert len(ids) == 2 and all(i.startswith("call_") for i in ids) and len(set(ids)) == 2
