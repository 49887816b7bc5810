"""``troupe run`` with issue 13's options: a loop preset by name, and text tool
calls against a server that refuses ``tools``."""

from __future__ import annotations

import json

from tests.cli.conftest import Home, mock_llm, request_bodies

CALL = {"name": "shell", "arguments": {"command": "echo made-by-text > out.txt"}}


async def test_run_with_a_preset_falls_back_to_text_calls(home: Home) -> None:
    script = {
        "reject_tools": True,
        "conversations": [
            {
                "match": "hello",
                "turns": [
                    {"text": f"<tool_call>{json.dumps(CALL)}</tool_call>"},
                    {"text": "finished by text calls"},
                ],
            }
        ],
    }
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--wire", "openai-chat", "--base-url", f"{mock.base_url}/v1",
            "--preset", "agentic-behavior-tool", "hello",
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert b"finished by text calls" in done.stdout
    assert (home.work / "out.txt").read_text() == "made-by-text\n"
    offered = {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert "terminal" in offered  # the preset's tool, refused natively ...
    assert all("tools" not in body for body in bodies[1:])  # ... then offered as text
    assert "- terminal:" in bodies[1]["messages"][0]["content"]


async def test_an_unknown_preset_is_one_line_and_exit_2(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "never asked"}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--preset", "no-such-preset", "hello"
        )
        assert request_bodies(mock) == []
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr
    assert b"no-such-preset" in done.stderr
