"""``troupe mock-llm``: scripts, real HTTP and SSE framing, rounds, replay, the CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trio

from actors.mockllm import Script, ScriptError, Turn, load_replies, load_script, serve_mock_llm
from actors.models import ServerError
from protocol.llm import Message, Request, ToolCall
from tests.models.conftest import HANG_GUARD, SHARED, WIRES, Connect

YAML_SCRIPT = """
model: scripted-1
turns:
  - fault: {status: 429, retry_after: 0.01}
  - reasoning: "Let me think."
    text: "Hello!"
    usage: {input: 12, output: 5, reasoning: 3}
  - tool_calls:
      - {name: read_file, arguments: {path: a.txt}, id: call_a}
"""


def test_yaml_script_loads(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)
    script = load_script(path)
    assert script.model == "scripted-1"
    assert script.turns[0].fault is not None and script.turns[0].fault.status == 429
    assert script.turns[1].usage.reasoning == 3
    assert script.turns[2].tool_calls[0].id == "call_a"


def test_bad_script_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("turns:\n  - txet: typo\n")
    with pytest.raises(ScriptError, match="txet"):
        load_script(path)


@pytest.mark.parametrize(
    ("wire", "path", "body", "tail"),
    [
        ("openai_responses", "/v1/responses", {"stream": True}, b"\n\n"),
        ("openai_chat", "/v1/chat/completions", {"stream": True}, b"data: [DONE]\n\n"),
        ("anthropic", "/v1/messages", {"stream": True}, b'{"type":"message_stop"}\n\n'),
        ("gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", {}, b"\r\n\r\n"),
    ],
)
async def test_real_sse_over_http(wire: str, path: str, body: dict, tail: bytes) -> None:
    async with (
        serve_mock_llm(Script([Turn(text="framed")])) as server,
        httpx.AsyncClient() as client,
        client.stream("POST", server.base_url + path, json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["transfer-encoding"] == "chunked"
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    assert raw.endswith(tail)
    assert server.requests[0].wire == wire


async def test_rounds_mode_answers_n_tool_calls_then_text(connect: Connect) -> None:
    async with connect("anthropic", Script(rounds=3, rounds_tool="step")) as (server, session):
        history = [Message.user("go")]
        responses = []
        with trio.fail_after(HANG_GUARD):
            for _ in range(10):
                response = await session.complete(Request("m", history))
                responses.append(response)
                if not response.tool_calls:
                    break
                call: ToolCall = response.tool_calls[0]
                assert call.name == "step"
                history += [response.message, Message.tool_result(call.id, "ok")]
    assert responses[-1].text == "done"
    assert len(server.requests) == 4


async def test_replay_serves_a_recording_byte_for_byte() -> None:
    recording = SHARED / "anthropic-sdk-python" / "tool_use_response.txt"
    if not recording.exists():
        pytest.skip(f"{recording} is absent")
    replies = load_replies(recording)
    async with serve_mock_llm(replies=replies) as server, httpx.AsyncClient() as client:
        response = await client.post(server.base_url + "/v1/messages", json={"stream": True})
    assert response.content == recording.read_bytes()


@pytest.mark.parametrize("wire", WIRES)
async def test_each_wire_sends_its_own_auth(wire: str, connect: Connect) -> None:
    async with connect(wire, Script([Turn(text="ok")])) as (server, session):
        await session.complete(Request("m", [Message.user("hi")]))
    headers = server.requests[0].headers
    if wire == "anthropic":
        assert headers["x-api-key"] == "test-key" and headers["anthropic-version"]
    elif wire == "gemini":
        assert headers["x-goog-api-key"] == "test-key"
    else:
        assert headers["authorization"] == "Bearer test-key"


def _troupe() -> list[str]:
    found = shutil.which("troupe")
    return [found] if found else [sys.executable, "-m", "actors.cli"]


def test_command_line_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(YAML_SCRIPT)
    child = subprocess.Popen(
        [*_troupe(), "mock-llm", "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(timeout=10) as client:
            first = client.post(url + "/v1/chat/completions", json={"messages": []})
            second = client.post(url + "/v1/chat/completions", json={"messages": []})
        assert first.status_code == 429 and first.headers["retry-after"] == "0.01"
        assert second.json()["choices"][0]["message"]["content"] == "Hello!"
        assert second.json()["model"] == "scripted-1"
    finally:
        child.terminate()
        child.wait(timeout=10)


def test_command_line_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('{"turns": 3}')
    done = subprocess.run(
        [*_troupe(), "mock-llm", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "invalid mock-llm script" in done.stderr


async def test_a_script_that_has_run_out_answers_500(connect: Connect) -> None:
    async with connect("openai_chat", Script([Turn(text="once")], repeat=False)) as (_, session):
        first = await session.complete(Request("m", [Message.user("a")]))
        assert first.text == "once"
        with pytest.raises(ServerError, match="run out"):
            await session.complete(Request("m", [Message.user("b")]))


def test_command_line_can_refuse_tools_and_write_rounds_as_text() -> None:
    """``--reject-tools``: a server without native tool calling (400 for ``tools``);
    a request without tools in rounds mode gets its call written in the text."""
    child = subprocess.Popen(
        [*_troupe(), "mock-llm", "--reject-tools", "--rounds", "1", "--text-rounds", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip() + "/v1/chat/completions"
        tool = {"type": "function", "function": {"name": "noop", "parameters": {}}}
        user = {"role": "user", "content": "go"}
        with httpx.Client(timeout=10) as client:
            refused = client.post(url, json={"messages": [user], "tools": [tool]})
            text = client.post(url, json={"messages": [user]})
            done = client.post(
                url, json={"messages": [user, {"role": "assistant", "content": "x"}]}
            )
        assert refused.status_code == 400
        assert "does not support tools" in refused.json()["error"]["message"]
        answer = text.json()["choices"][0]["message"]
        assert answer["content"] == (
            '<tool_call>\n{"name": "noop", "arguments": {"round": 1}}\n</tool_call>'
        )
        assert "tool_calls" not in answer or not answer["tool_calls"]
        assert done.json()["choices"][0]["message"]["content"] == "done"
    finally:
        child.terminate()
        child.wait(timeout=10)
