"""Every recorded real provider answer in ../shared/conformance/providers, replayed
over loopback HTTP through the gateway, gives what the recording says (see oracle.py).

One test per file. A file no adapter speaks is skipped with the reason.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import trio

from actors.mockllm import Reply, load_replies, serve_mock_llm
from actors.models import ModelError, RetryPolicy, StreamError
from protocol.llm import (
    Finish,
    Message,
    Request,
    Response,
    StreamFailed,
    TextDelta,
    ToolCallEnd,
)
from tests.models import oracle
from tests.models.conftest import HANG_GUARD, SHARED, Connect

NO_RETRY = RetryPolicy(max_retries=0)
STATUS_KINDS = {
    400: "invalid_request",
    401: "authentication",
    403: "access_denied",
    404: "not_found",
    429: "rate_limit",
}


def _files() -> list[str]:
    if not SHARED.is_dir():
        return []
    return sorted(str(path.relative_to(SHARED)) for path in SHARED.rglob("*") if path.is_file())


def wire_of(relative: str, uri: str = "") -> str | None:
    """Which adapter speaks a recording, from where it came from (or the URI it answered)."""
    if uri:
        path = uri.split("?")[0]
        if "bedrock" in uri:  # Converse is a wire; InvokeModel is Anthropic's, enveloped
            return "bedrock_converse" if path.endswith(("/converse", "/converse-stream")) else None
        if uri.split("?")[0].endswith("/responses"):
            return "openai_responses"
        if "/chat/completions" in uri:
            return "openai_chat"
        if uri.split("?")[0].endswith("/messages"):
            return "anthropic"
        if "generatecontent" in uri.lower():
            return "gemini"
        return None
    if relative.startswith("anthropic-sdk-python/") or "/packages/anthropic/" in relative:
        return "anthropic"
    if relative.startswith("openai-python/") or "/openai/src/chat/" in relative:
        return "openai_chat"
    if "/openai/src/responses/" in relative:
        return "openai_responses"
    if "/packages/google/" in relative:
        return "gemini"
    return None


def error_status(body: bytes) -> int:
    """The HTTP status a recorded error body was served with."""
    import json

    error = json.loads(body)["error"]
    if isinstance(error.get("code"), int):
        return error["code"]
    return 429 if error.get("code") == "insufficient_quota" else 400


def plan(relative: str) -> tuple[list[tuple[str, Reply]], str | None]:
    """The (adapter, reply) steps of a recording, or why no adapter can replay it."""
    steps, reason = _plan(relative)
    return list(steps), reason


@functools.cache
def _plan(relative: str) -> tuple[tuple[tuple[str, Reply], ...], str | None]:
    """Read once per process: five test modules plan every recording while they are
    collected and again when their tests run, and the YAML cassettes are slow to parse
    (``load_replies`` is still what reads them, on the first call)."""
    path = SHARED / relative
    replies = load_replies(path)
    if relative.endswith(".json") and b'"error"' in replies[0].body[:40]:
        replies = [Reply(error_status(replies[0].body), "application/json", replies[0].chunks)]
    out, other = [], []
    for reply in replies:
        wire = wire_of(relative, reply.uri)
        if wire is None:  # set-up calls (file uploads, background polling) are not replayed
            other.append(reply.uri or relative)
        else:
            out.append((wire, reply))
    if not out:
        return (), "no model call here that an adapter speaks: " + ", ".join(other)
    return tuple(out), None


def _params() -> list[Any]:
    params = []
    for relative in _files():
        _, reason = plan(relative)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(relative, marks=marks, id=relative))
    return params


def _nested_recipe(arguments: dict[str, Any]) -> bool:
    recipe = arguments["recipe"]
    return (
        recipe["name"] == "Lasagna"
        and len(recipe["ingredients"]) == 10
        and recipe["ingredients"][0] == {"amount": "16 oz", "name": "Lasagna noodles"}
        and recipe["steps"][0] == "Preheat oven to 375°F (190°C)."
    )


STREAMED_ARGUMENTS: dict[str, list[Any]] = {
    # Read off the recordings' partialArgs by hand.
    "google-stream-tool-call-arguments.chunks.txt": [
        {"location": "Boston"},
        {"location": "San Francisco"},
    ],
    "google-stream-no-args-tool-call.chunks.txt": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
    "google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": [
        {
            "operations": [
                {
                    "action": "add",
                    "description": "Fresh red apple",
                    "itemid": "apple_001",
                    "price": 0.5,
                },
                {
                    "action": "add",
                    "description": "Ripe yellow banana",
                    "itemid": "banana_001",
                    "price": 0.3,
                },
            ]
        }
    ],
    "google-vertex-stream-tool-call-arguments-nested.1.chunks.txt": [_nested_recipe],
}


def check(response: Response, expected: oracle.Expected, name: str = "") -> None:
    assert response.text == expected.text
    assert (response.reasoning or "") == expected.reasoning
    calls = response.tool_calls
    assert len(calls) == len(expected.tool_calls)
    streamed = iter(STREAMED_ARGUMENTS.get(name, []))
    for call, (call_id, name, arguments) in zip(calls, expected.tool_calls, strict=True):
        if call_id is None:  # Gemini: a synthetic id
            assert call.id.startswith("call_")
        else:
            assert call.id == call_id
        assert call.name == name
        if arguments == oracle.STREAMED:
            wanted = next(streamed)
            assert call.arguments_error is None
            assert wanted(call.arguments) if callable(wanted) else call.arguments == wanted
        elif arguments == oracle.INVALID:
            assert call.arguments_error is not None
            assert call.raw_arguments
        else:
            assert call.arguments_error is None
            assert call.arguments == arguments
    assert len({call.id for call in calls}) == len(calls)
    if expected.input_tokens is not None:
        assert response.usage.input_tokens == expected.input_tokens
    if expected.output_tokens is not None:
        assert response.usage.output_tokens == expected.output_tokens
    assert response.finish_reason.reason == expected.finish


async def run_stream(session: Any, request: Request, reply: Reply, wire: str, name: str) -> None:
    expected = oracle.expected_stream(wire, reply.body)
    try:
        async with session.stream(request) as events:
            seen = [event async for event in events]
    except StreamError as error:  # broken before the first event: raised, not retried
        assert expected.error == "stream", error
        assert "invalid JSON" in error.message
        return
    last = seen[-1]
    if expected.error is not None:
        assert type(last) is StreamFailed, last
        if expected.error == "stream":
            assert last.error.kind == "stream"
        else:  # the provider's own in-stream error, classified
            assert last.error.kind not in ("stream", "network", "timeout")
            assert last.error.message
        return
    assert type(last) is Finish, last
    check(last.response, expected, name)
    assert sum(1 for event in seen if type(event) is Finish) == 1
    deltas = "".join(e.delta for e in seen if type(e) is TextDelta)
    assert deltas == last.response.text
    ended = [e.call for e in seen if type(e) is ToolCallEnd]
    assert ended == last.response.tool_calls


async def run_complete(session: Any, request: Request, reply: Reply, wire: str) -> None:
    if reply.status >= 400:
        with pytest.raises(ModelError) as caught:
            await session.complete(request)
        error = caught.value
        assert error.status_code == reply.status
        body = reply.body
        lowered = body.lower()
        if b"insufficient_quota" in body:
            assert error.kind == "quota"
        elif reply.status == 400 and (b"does not exist" in lowered or b"not found" in lowered):
            assert error.kind == "not_found"  # the spec's message classification (6.5)
        else:
            assert error.kind == STATUS_KINDS[reply.status]
        if b"RetryInfo" in body:
            assert error.retry_after == pytest.approx(34.4)
        assert error.message
        return
    check(await session.complete(request), oracle.expected_complete(wire, reply.body))


@pytest.mark.parametrize("relative", _params())
async def test_recording(relative: str, connect: Connect) -> None:
    steps, _ = plan(relative)
    request = Request("recorded-model", [Message.user("hello")])
    replies = [reply for _, reply in steps]
    async with serve_mock_llm(replies=replies) as server:  # every interaction, in order
        for wire, reply in steps:
            async with connect(wire, server=server, policy=NO_RETRY) as (_, session):
                with trio.fail_after(HANG_GUARD):
                    if reply.content_type.startswith("text/event-stream"):
                        await run_stream(session, request, reply, wire, Path(relative).name)
                    else:
                        await run_complete(session, request, reply, wire)


def test_shared_folder_is_present() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the conformance recordings are not available")
    assert _files()
