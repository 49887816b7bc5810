"""Which wire format a request speaks (from its path), and each format's encoders
and readers: one :class:`Wire` per format, so the scripted provider keeps what it
knows about a wire in one place, as Troupe's client does in its descriptors.

The two are kept apart on purpose: the mock plays the providers' side and speaks
each wire on its own (a mock that read the client's descriptors could not catch the
client's mistakes), and its wires are not Troupe's (Bedrock InvokeModel is a wire
here, a platform to Troupe)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from actors.mockllm import (
    overflow,
    wire_anthropic,
    wire_bedrock,
    wire_converse,
    wire_gemini,
    wire_openai,
    wire_responses,
)
from actors.mockllm.answer import Answer
from actors.mockllm.overflow import Overflow
from actors.mockllm.replay import SSE

Body = dict[str, Any]
Calls = list[tuple[Any, Any]]


def _items(body: Body) -> list[Any]:
    """A Responses request's input items (its input may be one string)."""
    items = body.get("input")
    return items if isinstance(items, list) else []


def _responses_results(body: Body) -> int:
    return sum(1 for item in _items(body) if item.get("type") == "function_call_output")


def _chat_results(body: Body) -> int:
    return sum(1 for m in body.get("messages") or () if m.get("role") == "tool")


def _anthropic_results(body: Body) -> int:
    return sum(
        1
        for m in body.get("messages") or ()
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    )


def _converse_results(body: Body) -> int:
    return sum(
        1
        for m in body.get("messages") or ()
        for block in m.get("content") or ()
        if isinstance(block, dict) and "toolResult" in block
    )


def _gemini_results(body: Body) -> int:
    return sum(
        1
        for c in body.get("contents") or ()
        for part in c.get("parts") or ()
        if "functionResponse" in part
    )


def _responses_calls(body: Body) -> Calls:
    return [
        (item.get("name"), item.get("arguments"))
        for item in _items(body)
        if isinstance(item, dict) and item.get("type") == "function_call"
    ]


def _gemini_calls(body: Body) -> Calls:
    found: Calls = []
    for content in body.get("contents") or ():
        for part in content.get("parts") or ():
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict):
                found.append((call.get("name"), call.get("args")))
    return found


def _message_calls(body: Body) -> Calls:
    """Chat Completions', Anthropic's (also through Bedrock) and Converse's calls."""
    found: Calls = []
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


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _responses_first(body: Body) -> str:
    items = body.get("input")
    if isinstance(items, str):
        return items
    for item in items or ():
        if isinstance(item, dict) and item.get("role") == "user":
            return _text_of(item.get("content"))
    return ""


def _gemini_first(body: Body) -> str:
    for content in body.get("contents") or ():
        if content.get("role") == "user":
            return _text_of(content.get("parts"))
    return ""


def _message_first(body: Body) -> str:
    for message in body.get("messages") or ():
        if message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _responses_turns(body: Body) -> int:
    turns, in_answer = 0, False
    for item in _items(body):
        from_model = item.get("role") == "assistant" or item.get("type") in (
            "function_call",
            "reasoning",
        )
        if from_model and not in_answer:
            turns += 1
        in_answer = from_model
    return turns


def _gemini_turns(body: Body) -> int:
    return sum(1 for c in body.get("contents") or () if c.get("role") == "model")


def _message_turns(body: Body) -> int:
    return sum(1 for m in body.get("messages") or () if m.get("role") == "assistant")


class Wire(msgspec.Struct, frozen=True, kw_only=True):
    """One wire format as the provider speaks it: its answers' encoders and the
    readers of what a request carries."""

    name: str
    stream: Callable[[Answer], list[bytes]]
    complete: Callable[[Answer], bytes]
    error_event: Callable[[str, int], bytes]
    """(message, sequence number = events sent before it) -> the in-stream error frame"""
    error_body: Callable[[int, str, float | None], bytes]
    tool_result_marker: str
    overflow: Callable[[int, int], Overflow]
    """(tokens, window) -> the provider's answer to a prompt over its window"""
    tool_results: Callable[[Body], int]
    """How many tool results a request carries."""
    calls: Callable[[Body], Calls] = _message_calls
    """(name, arguments) of every tool call of the model a request carries."""
    first_user_text: Callable[[Body], str] = _message_first
    model_turns: Callable[[Body], int] = _message_turns
    """How many answers of the model a request already carries."""
    stream_content_type: str = SSE
    error_headers: Callable[[int], dict[str, str]] = lambda _status: {}
    """status -> the headers an error answer carries (AWS names its error in one)"""


def _no_retry_info(
    encoder: Callable[[int, str], bytes],
) -> Callable[[int, str, float | None], bytes]:
    return lambda status, message, _retry_after: encoder(status, message)


WIRES: dict[str, Wire] = {
    "openai_responses": Wire(
        name="openai_responses",
        stream=wire_responses.stream,
        complete=wire_responses.complete,
        error_event=wire_responses.error_event,
        error_body=_no_retry_info(wire_openai.openai_error_body),
        tool_result_marker="function_call_output",
        overflow=overflow.responses_overflow,
        tool_results=_responses_results,
        calls=_responses_calls,
        first_user_text=_responses_first,
        model_turns=_responses_turns,
    ),
    "openai_chat": Wire(
        name="openai_chat",
        stream=wire_openai.chat_stream,
        complete=wire_openai.chat_complete,
        error_event=wire_openai.chat_error_event,
        error_body=_no_retry_info(wire_openai.openai_error_body),
        tool_result_marker="tool",
        overflow=overflow.chat_overflow,
        tool_results=_chat_results,
    ),
    "anthropic": Wire(
        name="anthropic",
        stream=wire_anthropic.stream,
        complete=wire_anthropic.complete,
        error_event=wire_anthropic.error_event,
        error_body=_no_retry_info(wire_anthropic.error_body),
        tool_result_marker="tool_result",
        overflow=overflow.anthropic_overflow,
        tool_results=_anthropic_results,
    ),
    "gemini": Wire(
        name="gemini",
        stream=wire_gemini.stream,
        complete=wire_gemini.complete,
        error_event=wire_gemini.error_event,
        error_body=wire_gemini.error_body,
        tool_result_marker="functionResponse",
        overflow=overflow.gemini_overflow,
        tool_results=_gemini_results,
        calls=_gemini_calls,
        first_user_text=_gemini_first,
        model_turns=_gemini_turns,
    ),
    "bedrock": Wire(
        name="bedrock",
        stream=wire_bedrock.stream,
        complete=wire_anthropic.complete,
        error_event=wire_bedrock.error_event,
        error_body=_no_retry_info(wire_bedrock.error_body),
        tool_result_marker="tool_result",
        overflow=overflow.bedrock_overflow,
        tool_results=_gemini_results,  # as before: the rounds mode counts calls here
        stream_content_type=wire_bedrock.EVENT_STREAM,
        error_headers=wire_bedrock.error_headers,
    ),
    "bedrock_converse": Wire(
        name="bedrock_converse",
        stream=wire_converse.stream,
        complete=wire_converse.complete,
        error_event=wire_bedrock.error_event,
        error_body=_no_retry_info(wire_converse.error_body),
        tool_result_marker="toolResult",
        overflow=overflow.converse_overflow,
        tool_results=_converse_results,
        stream_content_type=wire_bedrock.EVENT_STREAM,
        error_headers=wire_bedrock.error_headers,
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
    return WIRES[wire].tool_results(body) if isinstance(body, dict) else 0


def _round_of(arguments: Any) -> int:
    if isinstance(arguments, str):
        try:
            arguments = msgspec.json.decode(arguments)
        except msgspec.DecodeError:
            return 0
    value = arguments.get("round") if isinstance(arguments, dict) else None
    return value if isinstance(value, int) else 0


def last_round(wire: str, body: Any, tool: str) -> int:
    """The highest ``round`` argument of the rounds tool's calls in a request (0: none)."""
    if not isinstance(body, dict):
        return 0
    calls = WIRES[wire].calls(body)
    return max((_round_of(args) for name, args in calls if name == tool), default=0)


def first_user_text(wire: str, body: Any) -> str:
    """The first user message of a request: what a scripted conversation matches on."""
    return WIRES[wire].first_user_text(body) if isinstance(body, dict) else ""


def count_model_turns(wire: str, body: Any) -> int:
    """How many answers of the model a request already carries (its turn number)."""
    return WIRES[wire].model_turns(body) if isinstance(body, dict) else 0


def overflow_error(wire: str, tokens: int, window: int) -> Overflow:
    """(status, body, headers) of ``wire``'s answer to a prompt over ``window``."""
    return WIRES[wire].overflow(tokens, window)
