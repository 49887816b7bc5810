"""A new user's first hour, as issue 31 found it: a task and piped text combine,
a headless run never waits for an approval nobody can give, and stream-json
input can answer one. The real command against the scripted provider, whose
recorded request bodies show what reached the model."""

from __future__ import annotations

import json
import subprocess
from functools import partial
from typing import Any

import trio

from tests.cli.conftest import (
    HANG_GUARD,
    Home,
    mock_llm,
    request_bodies,
    shell_then_text,
    text_of,
)


async def run_detached(home: Home, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``troupe ARGS < /dev/null``, as CI runs it."""
    with trio.fail_after(HANG_GUARD):
        return await trio.run_process(
            home.argv(*args), stdin=subprocess.DEVNULL, capture_stdout=True,
            capture_stderr=True, check=False, cwd=home.work, env=home.env,
        )  # fmt: skip


def last_user_text(body: Any) -> str:
    return text_of(body)


async def test_piped_text_and_a_task_both_reach_the_model(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "Looks fine."}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "-p", "Review", stdin=b"diff --git a/x b/x\n+new"
        )
        assert done.returncode == 0, done.stderr
        (body,) = request_bodies(mock)
    text = text_of(body)
    assert "Review" in text and "diff --git a/x b/x" in text and "+new" in text
    assert text.index("Review") < text.index("diff --git"), "the task comes first"


async def test_a_task_argument_with_piped_text_combines_too(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "explain", stdin=b"ERROR: disk full"
        )
        assert done.returncode == 0, done.stderr
        (body,) = request_bodies(mock)
    assert "explain" in text_of(body) and "ERROR: disk full" in text_of(body)


def _denied(mock: Any) -> None:
    bodies = request_bodies(mock)
    assert len(bodies) == 2, "the model got the denial and answered"
    assert "denied: nobody to ask" in text_of(bodies[1])


async def test_headless_text_mode_denies_an_approval_at_once(home: Home) -> None:
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        done = await run_detached(home, "run", "--base-url", mock.base_url, "clean up")
        _denied(mock)
    assert done.returncode == 0, done.stderr
    assert (home.work / "build").exists()
    notices = [line for line in done.stderr.decode().splitlines() if "nobody to ask" in line]
    assert len(notices) == 1 and "rm -rf build" in notices[0], done.stderr
    assert b"Approve command" not in done.stdout


async def test_headless_json_mode_denies_and_prints_the_result(home: Home) -> None:
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        done = await run_detached(
            home, "run", "--base-url", mock.base_url, "--output-format", "json", "clean up"
        )
        _denied(mock)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.decode().splitlines()
    assert json.loads(line)["status"] == "done"
    assert (home.work / "build").exists()


async def test_headless_stream_json_output_denies(home: Home) -> None:
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        done = await run_detached(
            home, "run", "--base-url", mock.base_url, "--output-format", "stream-json", "-p", "x"
        )
        _denied(mock)
    assert done.returncode == 0, done.stderr
    kinds = [json.loads(line).get("kind") for line in done.stdout.decode().splitlines()]
    assert "policy_decision" in kinds and "approval_request" not in kinds


async def test_approval_never_ask_lets_the_call_run(home: Home) -> None:
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        done = await run_detached(
            home, "run", "--base-url", mock.base_url, "--approval", "never-ask", "clean up"
        )
        assert len(request_bodies(mock)) == 2
    assert done.returncode == 0, done.stderr
    assert not (home.work / "build").exists()


async def test_approval_deny_refuses_even_at_a_pipe_with_stream_json_input(home: Home) -> None:
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        line = json.dumps({"type": "user", "text": "clean up"}).encode() + b"\n"
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--input-format", "stream-json",
            "--approval", "deny", stdin=line,
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert "approvals are off" in text_of(bodies[1])
    assert (home.work / "build").exists()


async def test_stream_json_input_answers_an_approval(home: Home) -> None:
    """A program driving ``troupe run`` reads the request and writes the answer."""
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        command = home.argv(
            "run", "--base-url", mock.base_url, "--input-format", "stream-json",
            "--output-format", "stream-json",
        )  # fmt: skip
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                process = await nursery.start(
                    partial(
                        trio.run_process, command, stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, cwd=home.work, env=home.env, check=False,
                    )
                )  # fmt: skip
                assert process.stdin is not None and process.stdout is not None
                user = {"type": "user", "text": "clean up"}
                await process.stdin.send_all(json.dumps(user).encode() + b"\n")
                buffer = b""
                while b'"approval_request"' not in buffer:
                    chunk = await process.stdout.receive_some()
                    assert chunk, buffer
                    buffer += chunk
                answer = {"type": "approval", "answer": "yes"}
                await process.stdin.send_all(json.dumps(answer).encode() + b"\n")
                await process.stdin.aclose()
                while chunk := await process.stdout.receive_some():
                    buffer += chunk
        assert len(request_bodies(mock)) == 2
    assert process.returncode == 0
    assert not (home.work / "build").exists()
    assert b'"action": "answered"' in buffer


async def test_json_output_prints_a_result_object_for_an_early_failure(home: Home) -> None:
    done = await run_detached(home, "run", "--output-format", "json", "no key here")
    assert done.returncode == 2
    (line,) = done.stdout.decode().splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["is_error"] and result["exit_code"] == 2
    assert "no API key" in result["error"] and result["session_id"] is None


async def test_a_task_too_big_for_one_frame_is_refused_before_any_session(home: Home) -> None:
    big = b"x" * (5 * 1024 * 1024)
    done = await home.troupe("run", "--embedded", "--base-url", "http://127.0.0.1:9", stdin=big)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("troupe run: the task is") and "MiB" in line
    listed = await home.troupe("sessions", "--json")
    assert listed.stdout == b"", "no empty session left behind"


async def test_did_you_mean_for_commands_flags_and_choices(home: Home) -> None:
    command = await home.troupe("rnu", "x")
    flag = await home.troupe("run", "--modle", "m", "x")
    choice = await home.troupe("run", "--output-format", "jsn", "x")
    assert command.returncode == flag.returncode == choice.returncode == 2
    assert "did you mean troupe run?" in command.stderr.decode()
    assert "did you mean --model?" in flag.stderr.decode()
    assert "did you mean json?" in choice.stderr.decode()


async def test_a_model_url_with_nothing_listening_suggests_the_model_server(home: Home) -> None:
    done = await run_detached(home, "run", "--base-url", "http://127.0.0.1:9", "hello")
    assert done.returncode == 1
    assert "is your model server running?" in done.stdout.decode()


async def test_mock_llm_on_a_busy_port_names_it(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "x"}]}) as mock:
        port = mock.base_url.rsplit(":", 1)[1].split("/")[0]
        done = await home.troupe("mock-llm", "--port", port)
    assert done.returncode == 1
    (line,) = done.stderr.decode().splitlines()
    assert f"127.0.0.1:{port} is already in use" in line
