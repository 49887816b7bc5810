"""Which wire format a request speaks (from its path), and that format's encoders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from actors.mockllm import (
    wire_anthropic,
    wire_bedrock,
    wire_converse,
    wire_gemini,
    wire_openai,
    wire_responses,
)
from actors.mockllm.answer import Answer
from actors.mockllm.replay import SSE


class Wire(msgspec.Struct, frozen=True):
    name: str
    stream: Callable[[Answer], list[bytes]]
    complete: Callable[[Answer], bytes]
    error_event: Callable[[str, int], bytes]
    """(message, sequence number = events sent before it) -> the in-stream error frame"""
    error_body: Callable[[int, str, float | None], bytes]
    tool_result_marker: str
    stream_content_type: str = SSE
    error_headers: Callable[[int], dict[str, str]] = lambda _status: {}
    """status -> the headers an error answer carries (AWS names its error in one)"""


def _no_retry_info(
    encoder: Callable[[int, str], bytes],
) -> Callable[[int, str, float | None], bytes]:
    return lambda status, message, _retry_after: encoder(status, message)


WIRES: dict[str, Wire] = {
    "openai_responses": Wire(
        "openai_responses",
        wire_responses.stream,
        wire_responses.complete,
        wire_responses.error_event,
        _no_retry_info(wire_openai.openai_error_body),
        "function_call_output",
    ),
    "openai_chat": Wire(
        "openai_chat",
        wire_openai.chat_stream,
        wire_openai.chat_complete,
        wire_openai.chat_error_event,
        _no_retry_info(wire_openai.openai_error_body),
        "tool",
    ),
    "anthropic": Wire(
        "anthropic",
        wire_anthropic.stream,
        wire_anthropic.complete,
        wire_anthropic.error_event,
        _no_retry_info(wire_anthropic.error_body),
        "tool_result",
    ),
    "gemini": Wire(
        "gemini",
        wire_gemini.stream,
        wire_gemini.complete,
        wire_gemini.error_event,
        wire_gemini.error_body,
        "functionResponse",
    ),
    "bedrock": Wire(
        "bedrock",
        wire_bedrock.stream,
        wire_anthropic.complete,
        wire_bedrock.error_event,
        _no_retry_info(wire_bedrock.error_body),
        "tool_result",
        wire_bedrock.EVENT_STREAM,
        wire_bedrock.error_headers,
    ),
    "bedrock_converse": Wire(
        "bedrock_converse",
        wire_converse.stream,
        wire_converse.complete,
        wire_bedrock.error_event,
        _no_retry_info(wire_converse.error_body),
        "toolResult",
        wire_bedrock.EVENT_STREAM,
        wire_bedrock.error_headers,
    ),
}


def route(path: str) -> tuple[str, bool | None] | None:
    """(wire name, streamed) for a request path; None for streamed = read the body."""
    path = path.split("?", 1)[0]
    if path.endswith("/invoke-with-response-stream"):  # AWS Bedrock
        return "bedrock", True
    if path.endswith("/invoke"):
        return "bedrock", False
    if path.endswith("/converse-stream"):  # AWS Bedrock Converse
        return "bedrock_converse", True
    if path.endswith("/converse"):
        return "bedrock_converse", False
    if path.endswith(":streamRawPredict"):  # Anthropic models on Vertex AI
        return "anthropic", True
    if path.endswith(":rawPredict"):
        return "anthropic", False
    if path.endswith("/responses"):
        return "openai_responses", None
    if path.endswith("/chat/completions"):
        return "openai_chat", None
    if path.endswith("/messages"):
        return "anthropic", None
    if ":streamGenerateContent" in path:
        return "gemini", True
    if ":generateContent" in path:
        return "gemini", False
    return None


def count_tool_results(wire: str, body: Any) -> int:
    """How many tool results a request carries (what the rounds mode counts)."""
    if not isinstance(body, dict):
        return 0
    if wire == "openai_responses":
        items = body.get("input")
        items = items if isinstance(items, list) else []
        return sum(1 for item in items if item.get("type") == "function_call_output")
    if wire == "openai_chat":
        return sum(1 for m in body.get("messages") or () if m.get("role") == "tool")
    if wire == "anthropic":
        return sum(
            1
            for m in body.get("messages") or ()
            if isinstance(m.get("content"), list)
            for block in m["content"]
            if block.get("type") == "tool_result"
        )
    if wire == "bedrock_converse":
        return sum(
            1
            for m in body.get("messages") or ()
            for block in m.get("content") or ()
            if isinstance(block, dict) and "toolResult" in block
        )
    return sum(
        1
        for c in body.get("contents") or ()
        for part in c.get("parts") or ()
        if "functionResponse" in part
    )


def _round_of(arguments: Any) -> int:
    if isinstance(arguments, str):
        try:
            arguments = msgspec.json.decode(arguments)
        except msgspec.DecodeError:
            return 0
    value = arguments.get("round") if isinstance(arguments, dict) else None
    return value if isinstance(value, int) else 0


def _calls(wire: str, body: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(name, arguments) of every tool call of the model a request carries."""
    found: list[tuple[Any, Any]] = []
    if wire == "openai_responses":
        items = body.get("input")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("type") == "function_call":
                found.append((item.get("name"), item.get("arguments")))
        return found
    if wire == "gemini":
        for content in body.get("contents") or ():
            for part in content.get("parts") or ():
                call = part.get("functionCall") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    found.append((call.get("name"), call.get("args")))
        return found
    for message in body.get("messages") or ():
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or ():  # Chat Completions
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                found.append((function.get("name"), function.get("arguments")))
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":  # Anthropic, Bedrock InvokeModel
                found.append((block.get("name"), block.get("input")))
            use = block.get("toolUse")  # Bedrock Converse
            if isinstance(use, dict):
                found.append((use.get("name"), use.get("input")))
    return found


def last_round(wire: str, body: Any, tool: str) -> int:
    """The highest ``round`` argument of the rounds tool's calls in a request (0: none)."""
    if not isinstance(body, dict):
        return 0
    return max((_round_of(args) for name, args in _calls(wire, body) if name == tool), default=0)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def first_user_text(wire: str, body: Any) -> str:
    """The first user message of a request: what a scripted conversation matches on."""
    if not isinstance(body, dict):
        return ""
    if wire == "openai_responses":
        items = body.get("input")
        if isinstance(items, str):
            return items
        for item in items or ():
            if isinstance(item, dict) and item.get("role") == "user":
                return _text_of(item.get("content"))
        return ""
    if wire == "gemini":
        for content in body.get("contents") or ():
            if content.get("role") == "user":
                return _text_of(content.get("parts"))
        return ""
    for message in body.get("messages") or ():
        if message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def count_model_turns(wire: str, body: Any) -> int:
    """How many answers of the model a request already carries (its turn number)."""
    if not isinstance(body, dict):
        return 0
    if wire == "openai_responses":
        items = body.get("input")
        items = items if isinstance(items, list) else []
        turns, in_answer = 0, False
        for item in items:
            from_model = item.get("role") == "assistant" or item.get("type") in (
                "function_call",
                "reasoning",
            )
            if from_model and not in_answer:
                turns += 1
            in_answer = from_model
        return turns
    if wire == "gemini":
        return sum(1 for c in body.get("contents") or () if c.get("role") == "model")
    return sum(1 for m in body.get("messages") or () if m.get("role") == "assistant")
