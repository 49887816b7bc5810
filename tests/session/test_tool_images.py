"""``read_file`` of an image and MCP tools' images reach a model that takes images
as an image, in each wire's own shape (real sessions against the scripted
provider over loopback); a model the catalog says takes none, or an image over
``max_image_bytes``, gets a note instead (coding-agent-loop-spec 3.3)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from actors.models.config import Wire
from protocol.environment import MAX_IMAGE_TRANSFER
from protocol.events import ToolCallEndEvent
from protocol.session import SessionConfig, UpdateConfig
from tests.image_files import jpeg, png
from tests.session.conftest import StartAgent
from tests.session.scripts import body_text, call, turns

PICTURE = png(4, 3)
WIRES: list[tuple[str, Wire, str | None]] = [
    ("openai", "openai_responses", None),
    ("openai", "openai_chat", None),
    ("anthropic", "anthropic", None),
    ("gemini", "gemini", None),
    ("anthropic", "bedrock_converse", "claude-sonnet-4-5"),
]


def images_in(wire: Wire, body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(media type, bytes) of every image a tool result carried, read as each
    provider reads its wire."""
    found: list[tuple[str, bytes]] = []

    def from_url(url: str) -> None:
        head, data = url.split(",", 1)
        found.append((head.removeprefix("data:").removesuffix(";base64"), base64.b64decode(data)))

    if wire == "openai_responses":
        for item in body["input"]:
            if item.get("type") == "function_call_output" and isinstance(item["output"], list):
                for part in item["output"]:
                    if part["type"] == "input_image":
                        from_url(part["image_url"])
    elif wire == "openai_chat":
        for message in body["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                for part in message["content"]:
                    if part["type"] == "image_url":
                        from_url(part["image_url"]["url"])
    elif wire == "anthropic":
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and isinstance(block["content"], list):
                    for part in block["content"]:
                        if part["type"] == "image":
                            source = part["source"]
                            found.append((source["media_type"], base64.b64decode(source["data"])))
    elif wire == "gemini":
        for content in body["contents"]:
            for part in content["parts"]:
                if "inlineData" in part:
                    inline = part["inlineData"]
                    found.append((inline["mimeType"], base64.b64decode(inline["data"])))
    else:
        for message in body["messages"]:
            for block in message["content"]:
                for part in block.get("toolResult", {}).get("content", []):
                    if "image" in part:
                        image = part["image"]
                        media = "image/" + image["format"]
                        found.append((media, base64.b64decode(image["source"]["bytes"])))
    return found


@pytest.mark.parametrize(("profile", "wire", "model"), WIRES)
async def test_read_file_of_an_image_sends_the_image(
    start_agent: StartAgent, profile: str, wire: Wire, model: str | None
) -> None:
    """By its bytes, not its name: ``shot.dat`` is a PNG."""
    script = turns([call("read_file", file_path="shot.dat")], "A red picture.")
    async with start_agent(profile, script, SessionConfig(model=model), wire=wire) as agent:
        (agent.workdir / "shot.dat").write_bytes(PICTURE)
        await agent.run("what is in shot.dat?")
        (end,) = agent.of(ToolCallEndEvent)
        assert not end.is_error
        assert end.output == f"Image file {agent.workdir / 'shot.dat'} (image/png, 4x3, " \
            f"{len(PICTURE)} bytes)."  # fmt: skip
        first, second = agent.request_bodies()
    assert images_in(wire, first) == []
    assert images_in(wire, second) == [("image/png", PICTURE)]
    assert "image/png, 4x3" in body_text(second)
    if wire == "openai_chat":  # the picture after the tool message, never between two
        roles = [message["role"] for message in second["messages"]]
        assert roles[-2:] == ["tool", "user"]


async def test_chat_keeps_a_rounds_tool_messages_together(start_agent: StartAgent) -> None:
    script = turns(
        [call("read_file", file_path="a.jpg"), call("read_file", file_path="notes.txt")],
        "Seen.",
    )
    async with start_agent("openai", script, wire="openai_chat") as agent:
        (agent.workdir / "a.jpg").write_bytes(jpeg(5, 4))
        (agent.workdir / "notes.txt").write_text("plain\n")
        await agent.run("look")
        second = agent.request_bodies()[1]
    roles = [message["role"] for message in second["messages"]]
    assert roles[-4:] == ["assistant", "tool", "tool", "user"]
    assert images_in("openai_chat", second) == [("image/jpeg", jpeg(5, 4))]


async def test_a_model_that_takes_no_images_reads_a_note(start_agent: StartAgent) -> None:
    """The catalog does not know ``local-llama``: no image goes to it; the history
    keeps the picture, so a switch to a model that takes images shows it."""
    script = {
        "turns": [
            {"tool_calls": [call("read_file", file_path="shot.png")]},
            {"text": "I cannot see it."},
            {"text": "Now I see it."},
        ],
        "repeat": False,
    }
    config = SessionConfig(model="local-llama")
    async with start_agent("openai", script, config, wire="openai_chat") as agent:
        (agent.workdir / "shot.png").write_bytes(PICTURE)
        await agent.run("what is in shot.png?")
        await agent.ref.ask(UpdateConfig(model="gpt-5.2"))
        await agent.run("and now?")
        _, second, third = agent.request_bodies()
    assert images_in("openai_chat", second) == []
    note = "[the image is not shown: the model local-llama does not take images]"
    assert note in body_text(second)
    assert images_in("openai_chat", third) == [("image/png", PICTURE)]


async def test_an_image_over_the_cap_is_a_note(start_agent: StartAgent) -> None:
    big = png(4, 3, noise=b"x" * 4000)
    script = turns([call("read_file", file_path="big.png")], "Too big.")
    config = SessionConfig(max_image_bytes=1000)
    async with start_agent("anthropic", script, config) as agent:
        (agent.workdir / "big.png").write_bytes(big)
        await agent.run("look")
        second = agent.request_bodies()[1]
    assert images_in("anthropic", second) == []
    assert f"an image of {len(big)} bytes (image/png) is not shown: over the 1000-byte" in (
        body_text(second)
    )


async def test_a_file_that_only_claims_to_be_an_image_is_read_as_a_file(
    start_agent: StartAgent,
) -> None:
    script = turns([call("read_file", file_path="photo.png")], "It is text.")
    async with start_agent("anthropic", script) as agent:
        (agent.workdir / "photo.png").write_text("not a picture at all\n")
        await agent.run("look")
        (end,) = agent.of(ToolCallEndEvent)
        second = agent.request_bodies()[1]
    assert end.output == "1 | not a picture at all"
    assert images_in("anthropic", second) == []


async def test_text_tool_calls_carry_the_image_with_the_result(start_agent: StartAgent) -> None:
    """A session calling tools in text (tool_calling="text"): the result goes back
    as a user message, the picture as that message's image part."""
    read = (
        '<tool_call>\n{"name": "read_file", "arguments": {"file_path": "shot.png"}}\n</tool_call>'
    )
    script = {"conversations": [{"match": "look", "turns": [{"text": read}, {"text": "Red."}]}]}
    config = SessionConfig(tool_calling="text")
    async with start_agent("openai", script, config, wire="openai_chat") as agent:
        (agent.workdir / "shot.png").write_bytes(PICTURE)
        await agent.run("look at shot.png")
        second = agent.request_bodies()[1]
    (result,) = [
        m for m in second["messages"] if m["role"] == "user" and isinstance(m["content"], list)
    ]
    assert result["content"][0]["text"].startswith('<tool_result name="read_file">')
    assert images_in("openai_chat", second) == [("image/png", PICTURE)]


async def test_an_image_past_what_an_environment_sends_is_named_not_sent(
    start_agent: StartAgent,
) -> None:
    """Past MAX_IMAGE_TRANSFER the environment sends only the image's facts."""
    huge = png(4, 3, noise=b"z" * MAX_IMAGE_TRANSFER)
    script = turns([call("read_file", file_path="huge.png")], "Too big.")
    async with start_agent("anthropic", script, SessionConfig(max_image_bytes=len(huge))) as agent:
        (agent.workdir / "huge.png").write_bytes(huge)
        await agent.run("look")
        (end,) = agent.of(ToolCallEndEvent)
        second = agent.request_bodies()[1]
    assert end.output.endswith(f"{len(huge)} bytes): too large to send to the model.")
    assert images_in("anthropic", second) == []
