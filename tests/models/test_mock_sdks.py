"""The official SDKs read ``troupe mock-llm``: every scenario, every mode, no error.

``openai``, ``anthropic`` and ``google-genai`` (test dependencies, code nobody here
wrote) talk to the mock over loopback HTTP in three modes each: a complete answer,
the raw event stream, and the SDK's accumulating helper (``responses.stream``,
``chat.completions.stream``, ``messages.stream``, a google-genai chat). What they
read must be what was scripted. Faults end in the SDK's own documented API error,
never in a crash inside the SDK. The one documented exception: the Chat stream
helper raises ``LengthFinishReasonError`` on ``finish_reason: length``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio

from actors.mockllm import Fault, Script, ToolCallSpec, Turn, UsageSpec, serve_mock_llm
from tests.models.conftest import HANG_GUARD

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
genai_errors = pytest.importorskip("google.genai.errors")

SCENARIOS: dict[str, Turn] = {
    "text": Turn(text="Hello from the mock, in several pieces."),
    "reasoning": Turn(
        reasoning="Think first, then answer.", text="42", usage=UsageSpec(12, 9, reasoning=5)
    ),
    "tool_calls": Turn(
        tool_calls=[
            ToolCallSpec("read_file", {"path": "a.txt"}),
            ToolCallSpec("list_dir", {}),
        ]
    ),
    "reasoning_tool": Turn(
        reasoning="Which file?", tool_calls=[ToolCallSpec("read_file", {"path": "b.txt"})]
    ),
    "cached": Turn(text="cached", usage=UsageSpec(100, 3, cache_read=80, cache_write=20)),
    "unicode": Turn(text='Grüße, 世界! 🎉 "quoted"\nnew line', delay=0),
    "empty": Turn(text=""),
    "dropped": Turn(text="a long answer that is cut", fault=Fault(drop_after=2)),
    "length": Turn(text="cut sh", finish="length"),
    "stream_error": Turn(text="partial answer", fault=Fault(error_after=3, message="boom")),
    # (a whole answer has one event: a complete call reads it unharmed)
    "rate_limited": Turn(fault=Fault(status=429, retry_after=0, message="slow down")),
    "server_error": Turn(fault=Fault(status=500, message="broken")),
}
MODES = ["complete", "stream", "helper"]
TOOLS_OPENAI = [
    {"type": "function", "name": "read_file", "parameters": {"type": "object"}},
]


class Read:
    """What an SDK made of an answer, in the SDK's own types."""

    def __init__(self, text: str = "", calls: list[tuple[str, Any]] | None = None) -> None:
        self.text = text
        self.calls = calls or []


def _expect(turn: Turn) -> Read:
    import json

    calls = []
    for spec in turn.tool_calls:
        args = spec.arguments if isinstance(spec.arguments, dict) else json.loads(spec.arguments)
        calls.append((spec.name, args))
    return Read(turn.text, calls)


# -- OpenAI Responses --------------------------------------------------------------


def _responses_read(response: Any) -> Read:
    import json

    calls = [
        (item.name, json.loads(item.arguments))
        for item in response.output
        if item.type == "function_call"
    ]
    return Read(response.output_text, calls)


def responses(base_url: str, mode: str) -> Read:
    client = openai.OpenAI(api_key="k", base_url=f"{base_url}/v1", max_retries=0)
    args: dict[str, Any] = {"model": "mock-model", "input": "hi", "tools": TOOLS_OPENAI}
    if mode == "complete":
        return _responses_read(client.responses.create(**args))
    if mode == "stream":
        final = None
        text = []
        for event in client.responses.create(**args, stream=True):
            if event.type == "response.output_text.delta":
                text.append(event.delta)
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
        assert final is not None
        read = _responses_read(final)
        assert "".join(text) == read.text
        return read
    with client.responses.stream(**args) as stream:
        last = None
        for event in stream:
            last = event
        if last is not None and last.type == "response.incomplete":
            # get_final_response() wants response.completed, by the SDK's design; the
            # helper hands the incomplete response over as its last event instead.
            return _responses_read(last.response)
        return _responses_read(stream.get_final_response())


# -- OpenAI Chat Completions ---------------------------------------------------------


def _chat_read(message: Any) -> Read:
    import json

    calls = [
        (call.function.name, json.loads(call.function.arguments))
        for call in message.tool_calls or ()
    ]
    return Read(message.content or "", calls)


def chat(base_url: str, mode: str) -> Read:
    client = openai.OpenAI(api_key="k", base_url=f"{base_url}/v1", max_retries=0)
    args: dict[str, Any] = {
        "model": "mock-model",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {}}}],
    }
    if mode == "complete":
        return _chat_read(client.chat.completions.create(**args).choices[0].message)
    if mode == "stream":
        text, calls = [], {}
        for chunk in client.chat.completions.create(
            **args, stream=True, stream_options={"include_usage": True}
        ):
            for choice in chunk.choices:
                text.append(choice.delta.content or "")
                for call in choice.delta.tool_calls or ():
                    slot = calls.setdefault(call.index, ["", ""])
                    slot[0] += (call.function and call.function.name) or ""
                    slot[1] += (call.function and call.function.arguments) or ""
        import json

        return Read("".join(text), [(n, json.loads(a)) for n, a in calls.values()])
    with client.chat.completions.stream(**args) as stream:
        for _ in stream:
            pass
        return _chat_read(stream.get_final_completion().choices[0].message)


# -- Anthropic -----------------------------------------------------------------------


def _anthropic_read(message: Any) -> Read:
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = [(block.name, block.input) for block in message.content if block.type == "tool_use"]
    return Read(text, calls)


def messages(base_url: str, mode: str) -> Read:
    client = anthropic.Anthropic(api_key="k", base_url=base_url, max_retries=0)
    args: dict[str, Any] = {
        "model": "mock-model",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if mode == "complete":
        return _anthropic_read(client.messages.create(**args))
    if mode == "stream":
        text = []
        for event in client.messages.create(**args, stream=True):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                text.append(event.delta.text)
        return Read("".join(text), None)
    with client.messages.stream(**args) as stream:
        for _ in stream:
            pass
        return _anthropic_read(stream.get_final_message())


# -- Gemini --------------------------------------------------------------------------


def _gemini_read(responses: list[Any]) -> Read:
    text, calls = [], []
    for response in responses:
        for candidate in response.candidates or ():
            for part in (candidate.content and candidate.content.parts) or ():
                if part.text and not part.thought:
                    text.append(part.text)
                if part.function_call:
                    calls.append((part.function_call.name, dict(part.function_call.args or {})))
                if part.thought_signature is not None:
                    assert isinstance(part.thought_signature, bytes)
    return Read("".join(text), calls)


def gemini(base_url: str, mode: str) -> Read:
    from google.genai import types

    options = types.HttpOptions(base_url=base_url, api_version="v1beta")
    client = genai.Client(api_key="k", http_options=options)
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True)
    )
    if mode == "complete":
        response = client.models.generate_content(model="mock-model", contents="hi", config=config)
        return _gemini_read([response])
    if mode == "stream":
        chunks = client.models.generate_content_stream(
            model="mock-model", contents="hi", config=config
        )
        return _gemini_read(list(chunks))
    chat_session = client.chats.create(model="mock-model", config=config)
    read = _gemini_read(list(chat_session.send_message_stream("hi")))
    history = chat_session.get_history()
    assert history[0].role == "user"
    return read


CLIENTS: dict[str, Callable[[str, str], Read]] = {
    "openai_responses": responses,
    "openai_chat": chat,
    "anthropic": messages,
    "gemini": gemini,
}


def _documented_error(wire: str, scenario: str, mode: str, error: BaseException) -> bool:
    """The SDK's own typed API error, as its documentation promises."""
    if scenario == "length" and wire == "openai_chat" and mode == "helper":
        return isinstance(error, openai.LengthFinishReasonError)
    if scenario == "dropped":
        # The connection closed mid-answer: the SDK's connection error, or (while a
        # stream is read) its HTTP library's own (httpx, or httpx2 for some SDKs).
        if isinstance(error, openai.APIConnectionError | anthropic.APIConnectionError):
            return True
        return type(error).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore")
    if wire.startswith("openai"):
        return isinstance(error, openai.APIError)
    if wire == "anthropic":
        return isinstance(error, anthropic.APIError)
    return isinstance(error, genai_errors.APIError)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("wire", list(CLIENTS))
async def test_official_sdk_reads_the_mock(wire: str, scenario: str, mode: str) -> None:
    turn = SCENARIOS[scenario]
    # A whole answer is one write: the stream faults (after N events) do not touch it.
    whole = scenario in ("stream_error", "dropped") and mode == "complete"
    faulty = turn.fault is not None and not whole
    failing = faulty or (scenario == "length" and wire == "openai_chat")
    async with serve_mock_llm(Script([turn], delta_size=5)) as server:
        with trio.fail_after(HANG_GUARD):
            try:
                read = await trio.to_thread.run_sync(CLIENTS[wire], server.base_url, mode)
            except Exception as error:
                if failing and _documented_error(wire, scenario, mode, error):
                    return
                raise
    if scenario == "length" and wire == "openai_chat" and mode == "helper":
        pytest.fail("the chat stream helper accepted finish_reason: length")
    assert not faulty, f"the SDK read a {scenario} answer without an error"
    expected = _expect(turn)
    assert read.text == expected.text
    if not (wire == "anthropic" and mode == "stream"):  # raw stream: text deltas only
        assert read.calls == expected.calls
