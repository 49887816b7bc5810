"""Headless use, as with ``codex exec``, ``claude -p`` and ``gemini -p``: the real
command against the scripted provider, whose recorded request bodies show what
reached the model."""

from __future__ import annotations

import json
from typing import Any

import trio

from tests.cli.conftest import (
    HANG_GUARD,
    Home,
    mock_llm,
    one_line,
    request_bodies,
    shell_then_text,
    text_of,
)


def result_of(stdout: bytes) -> dict[str, Any]:
    return json.loads(stdout.decode().splitlines()[-1])


async def test_task_from_stdin_pipe_and_dash(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "Read it."}]}) as mock:
        piped = await home.troupe("run", "--base-url", mock.base_url, stdin=b"piped task\n")
        dashed = await home.troupe("run", "--base-url", mock.base_url, "-", stdin=b"dash task")
        prompt = await home.troupe("run", "--base-url", mock.base_url, "-p", "flag task")
    for done in (piped, dashed, prompt):
        assert done.returncode == 0, done.stderr
        assert b"Read it." in done.stdout
    bodies = [text_of(body) for body in request_bodies(mock)]
    assert "piped task" in bodies[0] and "dash task" in bodies[1] and "flag task" in bodies[2]


async def test_model_effort_and_instructions_reach_the_request(home: Home) -> None:
    (home.work / "rules.md").write_text("Always answer in haiku.")
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--model", "my-model-7",
            "--reasoning-effort", "high", "--instructions", "@rules.md", "hello",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (body,) = request_bodies(mock)
    assert body["model"] == "my-model-7"
    assert body["reasoning"]["effort"] == "high"
    assert "Always answer in haiku." in body["instructions"]


async def test_openai_chat_wire_needs_no_key(home: Home) -> None:
    """A local OpenAI-compatible server (Ollama, llama.cpp): no key, Chat Completions."""
    async with mock_llm({"turns": [{"text": "local answer"}]}) as mock:
        done = await home.troupe(
            "run", "--wire", "openai-chat", "--base-url", f"{mock.base_url}/v1",
            "--model", "qwen3:8b", "hi",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (request,) = [r for r in mock.requests if r.method == "POST"]
    assert request.path.endswith("/chat/completions")
    assert request.json()["model"] == "qwen3:8b"
    assert b"local answer" in done.stdout


async def test_json_result_object_and_last_message(home: Home) -> None:
    script = shell_then_text("echo from-tool", final="The final answer.", usage={"input": 7})
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--output-format", "json",
            "--output-last-message", "last.txt", "work",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.decode().splitlines()) == 1  # nothing but the result
    result = result_of(done.stdout)
    assert result["type"] == "result" and result["status"] == "done"
    assert result["result"] == "The final answer." and result["error"] is None
    assert result["session_id"].startswith("s-") and result["num_turns"] == 2
    assert result["usage"]["input_tokens"] == 7 + 10  # the scripted counts, summed
    assert result["duration_ms"] >= 0 and "cost_usd" in result
    assert result["runtime"] == "embedded"
    assert (home.work / "last.txt").read_text() == "The final answer."


async def test_json_result_of_a_failure(home: Home) -> None:
    failing = {"turns": [{"fault": {"status": 400, "message": "bad model name"}}]}
    async with mock_llm(failing) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "--output-format", "json", "x")
    assert done.returncode == 1
    result = result_of(done.stdout)
    assert result["status"] == "error" and "bad model name" in result["error"]
    assert result["is_error"] is True


async def test_max_turns_and_stream_json_output(home: Home) -> None:
    endless = {"turns": [{"tool_calls": [{"name": "shell", "arguments": {"command": "true"}}]}]}
    async with mock_llm(endless) as mock:
        limited = await home.troupe(
            "run", "--base-url", mock.base_url, "--max-turns", "2", "--output-format",
            "stream-json", "loop",
        )  # fmt: skip
    assert limited.returncode == 53
    lines = [json.loads(line) for line in limited.stdout.decode().splitlines()]
    assert lines[0]["type"] == "event" and lines[-1]["type"] == "result"
    assert lines[-1]["status"] == "turn_limit"
    assert "turn_limit" in [line.get("kind") for line in lines]


async def test_stream_json_input_steers_a_running_session(home: Home) -> None:
    """The first message starts the work; one sent while it works steers it."""
    waits = "while [ ! -f go ]; do sleep 0.05; done; echo released"
    script = shell_then_text(waits, final="Steered and done.")
    async with mock_llm(script) as mock:
        process = await trio.lowlevel.open_process(
            home.argv("run", "--base-url", mock.base_url, "--input-format", "stream-json",
                      "--output-format", "stream-json"),
            stdin=-1, stdout=-1, cwd=home.work, env=home.env,
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        lines: list[dict[str, Any]] = []
        buffer = b""

        async def until(predicate: Any) -> dict[str, Any]:
            nonlocal buffer
            while True:
                for line in lines:
                    if predicate(line):
                        return line
                chunk = await process.stdout.receive_some()  # type: ignore[union-attr]
                assert chunk, f"output ended early: {lines}"
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                lines.extend(json.loads(line) for line in complete if line.strip())

        with trio.fail_after(HANG_GUARD):
            first = {"type": "user", "message": {"role": "user", "content": "start the job"}}
            await process.stdin.send_all(json.dumps(first).encode() + b"\n")
            await until(lambda line: line.get("kind") == "tool_call_start")
            steer = {"type": "user", "message": {"role": "user",
                     "content": [{"type": "text", "text": "also mention the docs"}]}}  # fmt: skip
            await process.stdin.send_all(json.dumps(steer).encode() + b"\n")
            acked = await until(lambda line: line.get("type") == "input" and "docs" in line["text"])
            assert acked["action"] == "steered"
            (home.work / "go").write_text("")
            await process.stdin.aclose()
            result = await until(lambda line: line.get("type") == "result")
            await process.wait()
        bodies = request_bodies(mock)
    assert process.returncode == 0
    assert result["status"] == "done" and result["result"] == "Steered and done."
    assert "also mention the docs" not in text_of(bodies[0])
    assert "also mention the docs" in text_of(bodies[1])


async def test_stream_json_input_rejects_a_bad_line(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--input-format", "stream-json",
            stdin=b'{"type": "assistant"}\n',
        )  # fmt: skip
    assert done.returncode == 2
    assert "stdin line 1 is not a stream-json user message" in one_line(done.stderr)


async def test_keys_and_urls_from_the_environment(home: Home) -> None:
    """The provider's own variables work as with its SDK (organisation included);
    with no key for a local server, the request never carries an empty bearer."""
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        from_env = await home.troupe(
            "run", "from env", OPENAI_API_KEY="sk-env", OPENAI_BASE_URL=mock.base_url,
            OPENAI_ORG_ID="org-7",
        )  # fmt: skip
        keyless = await home.troupe("run", "--base-url", mock.base_url, "keyless")
        assert from_env.returncode == 0 and keyless.returncode == 0, from_env.stderr
        first, second = [r.headers for r in mock.requests if r.method == "POST"]
    assert first["authorization"] == "Bearer sk-env"
    assert first["openai-organization"] == "org-7"
    assert second["authorization"].removeprefix("Bearer").strip() != ""
