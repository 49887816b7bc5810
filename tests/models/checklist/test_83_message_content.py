"""§8.3 Message and content model."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from actors.mockllm.replay import load_replies
from actors.models.client import Tool, generate
from actors.models.errors import InvalidRequestError
from protocol.llm import (
    AudioPart,
    DocumentPart,
    Finish,
    ImagePart,
    Message,
    RedactedThinkingPart,
    Request,
    TextPart,
    ThinkingPart,
)
from tests.models.checklist.conftest import MODEL, PROVIDERS, Spec
from tests.models.conftest import recorded

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def image_of(provider: str, body: dict) -> dict:
    """The one image block a request carries, in the provider's own shape."""
    if provider == "openai":
        return next(
            c for i in body["input"] for c in i.get("content", []) if c["type"] == "input_image"
        )
    if provider == "anthropic":
        return next(b for m in body["messages"] for b in m["content"] if b["type"] == "image")
    return next(
        p for c in body["contents"] for p in c["parts"] if "inlineData" in p or "fileData" in p
    )


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_text_only_messages(spec: Spec, provider: str) -> None:
    async with spec({"turns": [{"text": "plain"}]}) as (server, client):
        response = await client.complete(
            Request(MODEL[provider], [Message.user("hi")], provider=provider)
        )
    assert response.text == "plain"
    assert "hi" in str(server.requests[0].json())


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("how", ["url", "base64", "local file"])
async def test_image_input(spec: Spec, provider: str, how: str, tmp_path: Path) -> None:
    if how == "url":
        part = ImagePart(url="https://example.com/cat.png", media_type="image/png")
    elif how == "base64":
        part = ImagePart(data=PNG, media_type="image/png")
    else:
        path = tmp_path / "shot.jpeg"
        path.write_bytes(PNG)
        part = ImagePart(url=str(path))
    message = Message("user", [TextPart("What is this?"), part])
    async with spec() as (server, client):
        await client.complete(Request(MODEL[provider], [message], provider=provider))
    block = image_of(provider, server.requests[0].json())
    encoded = base64.b64encode(PNG).decode()
    media = "image/jpeg" if how == "local file" else "image/png"
    if how == "url":
        expected = {
            "openai": {
                "type": "input_image",
                "image_url": "https://example.com/cat.png",
                "detail": "auto",
            },
            "anthropic": {
                "type": "image",
                "source": {"type": "url", "url": "https://example.com/cat.png"},
            },
            "gemini": {
                "fileData": {"mimeType": "image/png", "fileUri": "https://example.com/cat.png"}
            },
        }[provider]
    else:
        expected = {
            "openai": {
                "type": "input_image",
                "image_url": f"data:{media};base64,{encoded}",
                "detail": "auto",
            },
            "anthropic": {
                "type": "image",
                "source": {"type": "base64", "media_type": media, "data": encoded},
            },
            "gemini": {"inlineData": {"mimeType": media, "data": encoded}},
        }[provider]
    assert {k: v for k, v in block.items() if k != "cache_control"} == expected


async def test_missing_local_image_is_a_clear_error(spec: Spec) -> None:
    message = Message("user", [ImagePart(url="./no/such/image.png")])
    async with spec() as (server, client):
        with pytest.raises(InvalidRequestError, match=r"no/such/image\.png"):
            await client.complete(Request("gpt-5.2", [message]))
    assert server.requests == []


PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
WAV = b"RIFF$\x00\x00\x00WAVEfmt "


def part_of(provider: str, body: dict, kinds: tuple[str, ...]) -> dict:
    """The one audio or document block a request carries, in the provider's own shape."""
    if provider == "openai":
        return next(c for i in body["input"] for c in i.get("content", []) if c["type"] in kinds)
    if provider == "anthropic":
        return next(b for m in body["messages"] for b in m["content"] if b["type"] in kinds)
    return next(
        p for c in body["contents"] for p in c["parts"] if "inlineData" in p or "fileData" in p
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("how", ["base64", "local file"])
async def test_document_input(spec: Spec, provider: str, how: str, tmp_path: Path) -> None:
    if how == "base64":
        part = DocumentPart(data=PDF, media_type="application/pdf", file_name="spec.pdf")
    else:
        path = tmp_path / "spec.pdf"
        path.write_bytes(PDF)
        part = DocumentPart(url=str(path))
    message = Message("user", [TextPart("Summarise this."), part])
    async with spec() as (server, client):
        await client.complete(Request(MODEL[provider], [message], provider=provider))
    block = part_of(provider, server.requests[0].json(), ("input_file", "document"))
    encoded = base64.b64encode(PDF).decode()
    expected = {
        "openai": {
            "type": "input_file",
            "filename": "spec.pdf",
            "file_data": f"data:application/pdf;base64,{encoded}",
        },
        "anthropic": {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": encoded},
            "title": "spec.pdf",
        },
        "gemini": {"inlineData": {"mimeType": "application/pdf", "data": encoded}},
    }[provider]
    assert {k: v for k, v in block.items() if k != "cache_control"} == expected


async def test_plain_text_document_goes_to_anthropic_as_text(spec: Spec) -> None:
    part = DocumentPart(data=b"line one\nline two\n", media_type="text/plain")
    async with spec() as (server, client):
        await client.complete(
            Request(MODEL["anthropic"], [Message("user", [part])], provider="anthropic")
        )
    block = part_of("anthropic", server.requests[0].json(), ("document",))
    assert block["source"] == {
        "type": "text", "media_type": "text/plain", "data": "line one\nline two\n"
    }  # fmt: skip


@pytest.mark.parametrize("provider", ["gemini"])
async def test_audio_input(spec: Spec, provider: str) -> None:
    """Gemini takes audio inline; Chat Completions too (tests/models/test_requests_sdk_params.py
    checks its ``input_audio`` against the openai SDK's types)."""
    part = AudioPart(data=WAV, media_type="audio/wav")
    async with spec() as (server, client):
        await client.complete(
            Request(MODEL[provider], [Message("user", [part])], provider=provider)
        )
    block = part_of(provider, server.requests[0].json(), ("input_audio",))
    encoded = base64.b64encode(WAV).decode()
    assert (
        block
        == {
            "gemini": {"inlineData": {"mimeType": "audio/wav", "data": encoded}},
        }[provider]
    )


@pytest.mark.parametrize(
    ("provider", "part", "says"),
    [
        ("anthropic", AudioPart(data=WAV, media_type="audio/wav"), "cannot send audio"),
        ("openai", AudioPart(data=WAV, media_type="audio/wav"), "openai_chat wire"),
    ],
)
async def test_audio_a_wire_cannot_carry_is_refused_before_sending(
    spec: Spec, provider: str, part: AudioPart, says: str
) -> None:
    async with spec() as (server, client):
        with pytest.raises(InvalidRequestError, match=says):
            await client.complete(
                Request(MODEL[provider], [Message("user", [part])], provider=provider)
            )
    assert server.requests == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_tool_call_round_trip(spec: Spec, provider: str) -> None:
    script = {
        "turns": [
            {"tool_calls": [{"name": "weather", "arguments": {"city": "Paris"}, "id": "call_w"}]},
            {"text": "It is sunny."},
        ]
    }
    tool = Tool(
        "weather",
        "Weather",
        {"type": "object", "properties": {"city": {"type": "string"}}},
        lambda city: f"sunny in {city}",
    )
    async with spec(script) as (server, client):
        result = await generate(
            MODEL[provider], "weather?", tools=[tool], provider=provider, client=client
        )
    assert result.text == "It is sunny."
    second = server.requests[1].json()
    text = str(second)
    assert "sunny in Paris" in text and "weather" in text
    if provider == "openai":
        kinds = [i["type"] for i in second["input"] if "type" in i]
        assert kinds[-2:] == ["function_call", "function_call_output"]
        assert second["input"][-1]["call_id"] == "call_w"
    elif provider == "anthropic":
        assert second["messages"][1]["content"][0]["id"] == "call_w"
        assert second["messages"][2]["content"][0]["tool_use_id"] == "call_w"
    else:
        assert second["contents"][1]["parts"][0]["functionCall"]["name"] == "weather"
        assert second["contents"][2]["parts"][0]["functionResponse"]["name"] == "weather"


async def test_thinking_blocks_round_trip_with_signatures(spec: Spec) -> None:
    script = {"turns": [{"reasoning": "Let me think.", "signature": "sig-abc", "text": "Done."}]}
    async with spec(script) as (server, client):
        first = await client.complete(
            Request("claude-opus-4-6", [Message.user("q")], provider="anthropic")
        )
        (thinking,) = [p for p in first.message.content if type(p) is ThinkingPart]
        assert (thinking.text, thinking.signature) == ("Let me think.", "sig-abc")
        history = [Message.user("q"), first.message, Message.user("next")]
        await client.complete(Request("claude-opus-4-6", history, provider="anthropic"))
    sent = server.requests[1].json()["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "Let me think.", "signature": "sig-abc"}


async def test_redacted_thinking_passes_through_verbatim(spec: Spec) -> None:
    replies = load_replies(
        recorded(
            "pydantic-ai/tests/models/cassettes/test_anthropic/"
            "test_anthropic_model_thinking_part_redacted_stream.yaml"
        )
    )
    async with spec(replies=replies[:1] * 2) as (server, client):
        request = Request("claude-opus-4-6", [Message.user("q")], provider="anthropic")
        async with client.stream(request) as events:
            seen = [e async for e in events]
        final = seen[-1]
        assert isinstance(final, Finish)
        message = final.response.message
        redacted = [p for p in message.content if type(p) is RedactedThinkingPart]
        assert redacted and all(p.data for p in redacted)
        history = [Message.user("q"), message, Message.user("more")]
        async with client.stream(
            Request("claude-opus-4-6", history, provider="anthropic")
        ) as again:
            [e async for e in again]
    sent = [
        b
        for b in server.requests[1].json()["messages"][1]["content"]
        if b["type"] == "redacted_thinking"
    ]
    assert [b["data"] for b in sent] == [p.data for p in redacted]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_multimodal_text_and_images_in_one_message(spec: Spec, provider: str) -> None:
    message = Message(
        "user",
        [
            TextPart("Compare"),
            ImagePart(data=PNG),
            TextPart("and"),
            ImagePart(url="https://x/y.png"),
        ],
    )
    async with spec() as (server, client):
        await client.complete(Request(MODEL[provider], [message], provider=provider))
    text = str(server.requests[0].json())
    assert "Compare" in text and "and" in text
    assert base64.b64encode(PNG).decode() in text and "https://x/y.png" in text
