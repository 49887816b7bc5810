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


async def test_run_agentic_until_complete(home: Home) -> None:
    enter = {
        "name": "enter_agentic_mode",
        "arguments": {"user_prompt": "greet", "objective": "hello.txt exists"},
    }
    shell = {"name": "shell", "arguments": {"command": "echo hi > hello.txt"}}
    complete = {"name": "complete", "arguments": {"result": "hello.txt made", "status": "partial"}}
    script = {
        "turns": [{"tool_calls": [enter]}, {"tool_calls": [shell]}, {"tool_calls": [complete]}],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--agentic", "--max-iterations", "7",
            "--output-format", "json", "greet",
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 3
    assert "Iteration: 2 of 7" in json.dumps(bodies[2])
    assert json.loads(done.stdout)["result"] == "hello.txt made"
    assert (home.work / "hello.txt").read_text() == "hi\n"


async def test_run_agentic_shows_the_loop_and_its_end(home: Home) -> None:
    enter = {"name": "enter_agentic_mode", "arguments": {"user_prompt": "u", "objective": "obj"}}
    working = {
        "text": "still going",
        "tool_calls": [{"name": "shell", "arguments": {"command": "true"}}],
    }
    script = {"turns": [{"tool_calls": [enter]}, working], "repeat": True}
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--preset", "agentic-behavior-tool",
            "--max-iterations", "2", "go",
        )  # fmt: skip
        assert len(request_bodies(mock)) == 3
    out = done.stdout.decode()
    assert "[agentic mode] obj (at most 2 iterations)" in out
    assert "[agentic iteration 2 of 2]" in out
    assert "[agentic iteration limit] still going" in out
    assert "Stopped: iteration limit reached (2 agentic iterations" in out
    assert done.returncode == 53  # the turn-limit exit code


async def test_a_negative_max_iterations_is_one_line_and_exit_2(home: Home) -> None:
    done = await home.troupe("run", "--max-iterations", "-1", "hello")
    assert done.returncode == 2
    assert done.stderr.decode().strip().count("\n") == 0
    assert "--max-iterations" in done.stderr.decode()


async def test_run_stops_at_the_input_token_budget(home: Home) -> None:
    turn = {"tool_calls": [CALL], "usage": {"input": 100, "output": 20}}
    async with mock_llm({"turns": [turn], "repeat": True}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--input-token-budget", "300", "go"
        )
        assert len(request_bodies(mock)) == 3  # 120, 240 (warned), 360: stopped
    out = done.stdout.decode()
    assert "[warning] Token budget: 240 of 300 tokens used for this request" in out
    assert "[token budget] input_token_budget: 360 tokens used" in out
    assert done.returncode == 53


async def test_a_negative_token_budget_is_one_line_and_exit_2(home: Home) -> None:
    done = await home.troupe("run", "--session-token-budget", "-5", "hello")
    assert done.returncode == 2
    assert done.stderr.decode().strip().count("\n") == 0
    assert "--session-token-budget must be 0" in done.stderr.decode()


async def test_run_with_text_tool_calling_offers_no_native_tools(home: Home) -> None:
    script = {
        "turns": [
            {"text": f"<tool_call>{json.dumps(CALL)}</tool_call>"},
            {"text": "written by a text call"},
        ],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--wire", "openai-chat", "--base-url", f"{mock.base_url}/v1",
            "--tool-calling", "text", "hello",
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert len(bodies) == 2 and all("tools" not in body for body in bodies)
    assert "<tool_call>" in bodies[0]["messages"][0]["content"]
    assert (home.work / "out.txt").read_text() == "made-by-text\n"


async def test_native_tool_calling_is_kept_native(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "hi"}], "repeat": False}) as mock:
        done = await home.troupe(
            "run", "--wire", "openai-chat", "--base-url", f"{mock.base_url}/v1",
            "--tool-calling", "native", "hello",
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert "shell" in {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert "<tool_call>" not in bodies[0]["messages"][0]["content"]


async def test_a_bad_tool_calling_value_is_one_line_and_exit_2(home: Home) -> None:
    done = await home.troupe("run", "--tool-calling", "xml", "hello")
    assert done.returncode == 2
    err = done.stderr.decode().strip()
    assert "\n" not in err and "Traceback" not in err
    assert "--tool-calling must be native, text or auto, not 'xml'" in err
