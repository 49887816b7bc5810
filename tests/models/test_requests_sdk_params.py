"""What the adapters send validates against the official SDKs' typed request params,
made strict: an unknown key anywhere in the body is refused.

``openai`` and ``anthropic`` describe their request bodies as TypedDicts; wrapped in a
pydantic model with ``extra="forbid"`` they refuse any key the API does not define, at
every depth. ``google-genai`` models (which forbid extra keys themselves) check each
member of a Gemini body. Every adapter option of issue 21 is in the requests here.
"""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import msgspec
import pytest

from actors.models.config import Wire, endpoint
from actors.models.errors import InvalidRequestError
from actors.models.registry import adapter_for
from protocol.llm import (
    AudioPart,
    DocumentPart,
    ImagePart,
    Message,
    Request,
    ResponseFormat,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
)

pydantic = pytest.importorskip("pydantic")
pytest.importorskip("openai")
pytest.importorskip("anthropic")
genai_types = pytest.importorskip("google.genai.types")

OPEN_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
STRICT_SCHEMA = {
    "type": "object",
    "properties": {"pattern": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
    "required": ["pattern", "limit"],
    "additionalProperties": False,
}
TOOLS = [
    ToolDefinition("read_file", "Read a file.", OPEN_SCHEMA),
    ToolDefinition("grep", "Search.", STRICT_SCHEMA),
]
PROVIDER_OF = {"openai_responses": "openai"}


def _history(wire: Wire) -> list[Message]:
    provider = PROVIDER_OF.get(wire, wire)
    call = ToolCall("call_abc", "read_file", {"path": "a.txt"}, signature="c2ln")
    # Anthropic and the Responses API take no audio (the adapters refuse it, tested
    # in the checklist).
    takes_audio = wire in ("openai_chat", "gemini")
    audio = [AudioPart(data=b"RIFF", media_type="audio/wav")] if takes_audio else []
    return [
        Message.system("Be terse."),
        Message.developer("Prefer small diffs."),
        Message(
            "user",
            [
                TextPart("Look:"),
                ImagePart(data=b"\x89PNG", media_type="image/png"),
                DocumentPart(data=b"%PDF-1.4", file_name="spec.pdf"),
                *audio,
            ],
        ),
        Message(
            "assistant",
            [ThinkingPart("Read it first.", "c2lnbmVk", provider, "rs_1"), TextPart("Ok."), call],
        ),
        Message.tool_result("call_abc", "file body", name="read_file"),
        Message.tool_result("call_abc", {"error": "gone"}, is_error=True, name="read_file"),
        Message.user("Now summarise."),
    ]


def _requests(wire: Wire) -> list[tuple[str, Request]]:
    history = _history(wire)
    schema = ResponseFormat("json_schema", STRICT_SCHEMA, strict=True)
    return [
        ("plain", Request("m", [Message.user("hi")])),
        (
            "everything",
            Request(
                "m",
                history,
                tools=TOOLS,
                tool_choice=ToolChoice("auto"),
                temperature=0.2,
                top_p=0.9,
                max_tokens=4000,
                stop_sequences=["END"] if wire != "openai_responses" else [],
                reasoning_effort="high",
                reasoning_summary="auto" if wire == "openai_responses" else None,
                metadata={"user_id": "u-1"},
            ),
        ),
        ("required", Request("m", history, tools=TOOLS, tool_choice=ToolChoice("required"))),
        ("named", Request("m", history, tools=TOOLS, tool_choice=ToolChoice("named", "grep"))),
        ("structured", Request("m", history, response_format=schema)),
        ("json", Request("m", history, response_format=ResponseFormat("json"))),
        (
            "options",
            Request(
                "gemini-2.5-pro" if wire == "gemini" else "m",
                history,
                tools=TOOLS,
                reasoning_effort="low",
                provider_options={
                    "openai": {"previous_response_id": "resp_1", "prompt_cache_key": "s-1"},
                    "anthropic": {"cache_ttl": "1h"},
                    "gemini": {"thinking_budget": 2048},
                },
            ),
        ),
    ]


@cache
def _strict(name: str) -> Any:
    """A pydantic model whose one field is the SDK's params TypedDict, extras forbidden."""
    if name.startswith("responses"):
        from openai.types.responses import response_create_params as module

        typed = getattr(module, "ResponseCreateParams" + name.removeprefix("responses_"))
    elif name.startswith("chat"):
        from openai.types.chat import completion_create_params as module

        typed = getattr(module, "CompletionCreateParams" + name.removeprefix("chat_"))
    else:
        from anthropic.types import message_create_params as module

        typed = getattr(module, "MessageCreateParams" + name.removeprefix("anthropic_"))
    config = pydantic.ConfigDict(extra="forbid")
    return pydantic.create_model(f"Strict_{name}", __config__=config, body=(typed, ...))


def _consume(value: Any) -> None:
    """Validate what pydantic validates lazily: ``Iterable[...]`` fields (messages,
    content blocks) are checked only as they are iterated."""
    if isinstance(value, dict):
        for member in value.values():
            _consume(member)
    elif isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        for member in value:
            _consume(member)


def _problems(error: Exception) -> str:
    """The errors of a strict validation, without the noise of every union member."""
    lines = str(error).splitlines()
    wanted = []
    for where, what in itertools.pairwise(lines):
        if "extra_forbidden" in what or "type=missing" in what:
            wanted.append(f"{where.split('.')[-1]}... {what.strip()[:120]}  [{where[-150:]}]")
    return "\n".join(sorted(set(wanted))[:25]) or "\n".join(lines[:20])


def validate(wire: Wire, body: dict[str, Any], stream: bool) -> None:
    kind = "Streaming" if stream else "NonStreaming"
    if wire == "gemini":
        _validate_gemini(body)
        return
    prefix = {"openai_responses": "responses", "openai_chat": "chat", "anthropic": "anthropic"}
    model = _strict(f"{prefix[wire]}_{kind}")
    problems = ""
    try:
        _consume(model.model_validate({"body": body}).body)
    except pydantic.ValidationError as error:
        problems = _problems(error)
    if problems:
        pytest.fail(f"{wire} body refused by the SDK's params:\n{problems}")


GEMINI_MEMBERS = {
    "contents": ("list", "Content"),
    "systemInstruction": ("one", "Content"),
    "tools": ("list", "Tool"),
    "toolConfig": ("one", "ToolConfig"),
    "generationConfig": ("one", "GenerationConfig"),
    "safetySettings": ("list", "SafetySetting"),
    "cachedContent": ("str", ""),
}


def _validate_gemini(body: dict[str, Any]) -> None:
    unknown = set(body) - set(GEMINI_MEMBERS)
    assert not unknown, f"keys Gemini does not define: {unknown}"
    for key, value in body.items():
        shape, type_name = GEMINI_MEMBERS[key]
        if shape == "str":
            assert isinstance(value, str)
            continue
        model = getattr(genai_types, type_name)
        for member in value if shape == "list" else [value]:
            problems = ""
            try:
                model.model_validate(member)
            except pydantic.ValidationError as error:
                problems = _problems(error)
            if problems:
                pytest.fail(f"gemini {key} refused by google-genai:\n{problems}")


ENDPOINTS: dict[Wire, str] = {
    "openai_responses": "https://api.openai.com/v1",
    "openai_chat": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta",
}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "complete"])
@pytest.mark.parametrize("wire", list(ENDPOINTS))
def test_requests_validate_against_the_sdks_strict_params(wire: Wire, stream: bool) -> None:
    adapter = adapter_for(endpoint(wire, ENDPOINTS[wire], "k"))
    for name, request in _requests(wire):
        body = msgspec.json.decode(adapter.build(request, stream=stream).body)
        try:
            validate(wire, body, stream)
        except BaseException:
            print(f"request {name!r}")
            raise


@pytest.mark.parametrize("wire", list(ENDPOINTS))
def test_strict_validation_refuses_an_unknown_key(wire: Wire) -> None:
    """The check itself can fail: one stray key deep in a message is refused."""
    adapter = adapter_for(endpoint(wire, ENDPOINTS[wire], "k"))
    body = msgspec.json.decode(adapter.build(_requests(wire)[1][1], stream=True).body)
    conversation = {"openai_responses": "input", "gemini": "contents"}.get(wire, "messages")
    body[conversation][-1]["stray"] = 1
    with pytest.raises((pytest.fail.Exception, AssertionError)):
        validate(wire, body, True)


def _body(wire: Wire, base_url: str, request: Request) -> dict[str, Any]:
    adapter = adapter_for(endpoint(wire, base_url, "k"))
    return msgspec.json.decode(adapter.build(request, stream=True).body)  # type: ignore[no-any-return]


def test_responses_options_of_issue_21() -> None:
    requests = dict(_requests("openai_responses"))
    body = _body("openai_responses", ENDPOINTS["openai_responses"], requests["required"])
    # reasoning items carried without reasoning asked for: still encrypted content
    assert body["include"] == ["reasoning.encrypted_content"]
    tools = {tool["name"]: tool["strict"] for tool in body["tools"]}
    assert tools == {"read_file": False, "grep": True}
    body = _body("openai_responses", ENDPOINTS["openai_responses"], requests["options"])
    assert body["previous_response_id"] == "resp_1" and body["prompt_cache_key"] == "s-1"
    # continuing a stored response: only what came after the model's last answer
    assert [item.get("type") for item in body["input"]] == [
        "function_call_output",
        "function_call_output",
        "message",
    ]


def test_chat_speaks_to_openai_and_to_local_servers_as_each_expects() -> None:
    request = dict(_requests("openai_chat"))["everything"]
    openai_body = _body("openai_chat", ENDPOINTS["openai_chat"], request)
    assert openai_body["max_completion_tokens"] == 4000 and "max_tokens" not in openai_body
    assert "reasoning_content" not in openai_body["messages"][3]
    assert {t["function"]["name"]: t["function"].get("strict") for t in openai_body["tools"]} == {
        "read_file": None,
        "grep": True,
    }
    azure = _body("openai_chat", "https://res.openai.azure.com/openai/v1", request)
    assert "max_completion_tokens" in azure and "reasoning_content" not in azure["messages"][3]
    local = _body("openai_chat", "http://127.0.0.1:8080/v1", request)
    assert local["max_tokens"] == 4000 and "max_completion_tokens" not in local
    assert local["messages"][3]["reasoning_content"] == "Read it first."


@pytest.mark.parametrize(
    ("part", "says"),
    [
        (AudioPart(url="https://example.com/a.wav"), "audio by URL"),
        (AudioPart(data=b"fLaC", media_type="audio/flac"), "audio/flac"),
        (DocumentPart(url="https://example.com/a.pdf"), "document by URL"),
    ],
)
def test_chat_refuses_what_chat_completions_cannot_carry(
    part: AudioPart | DocumentPart, says: str
) -> None:
    request = Request("m", [Message("user", [part])])
    with pytest.raises(InvalidRequestError, match=says):
        _body("openai_chat", ENDPOINTS["openai_chat"], request)


def test_anthropic_options_of_issue_21() -> None:
    requests = dict(_requests("anthropic"))
    adapter = adapter_for(endpoint("anthropic", ENDPOINTS["anthropic"], "k"))
    call = adapter.build(requests["options"], stream=True)
    body = msgspec.json.decode(call.body)
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][-1]["content"][-1]["cache_control"]["ttl"] == "1h"
    assert body["thinking"]["type"] == "enabled"
    assert "interleaved-thinking-2025-05-14" in call.headers["anthropic-beta"]
    body = _body("anthropic", ENDPOINTS["anthropic"], requests["structured"])
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": STRICT_SCHEMA}}


def test_gemini_thinking_budget_and_level() -> None:
    requests = dict(_requests("gemini"))
    two = _body("gemini", ENDPOINTS["gemini"], requests["options"])  # gemini-2.5-pro
    assert two["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 2048,
    }
    three = _body("gemini", ENDPOINTS["gemini"], requests["everything"])
    assert three["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "high",
    }
