"""``troupe run`` through a running server, on the blocking client (issue #36): the
same result object, output, notices and exit codes as the trio path, and none of
the event loop, the WebSocket library or the runtime imported. Every test runs
the real command against a real ``troupe serve``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from actors.mockllm import MockLLMServer
from tests.cli.conftest import (
    HANG_GUARD,
    Home,
    mock_llm,
    one_line,
    request_bodies,
    shell_then_text,
    text_of,
)
from tests.cli.test_errors import serve, stop
from tests.cli.test_lazy_imports import _RUN_AND_RECORD, _loaded

NOT_IN_A_RUN_THROUGH_A_SERVER = ("trio", "anyio", "sniffio", "httpx", "trio_websocket",
                                 "wsproto", "actors.kernel", "actors.session",
                                 "actors.server.server", "actors.policy.engine", "actors.models",
                                 "rich", "_hashlib", "sqlite3")  # fmt: skip
"""Nor OpenSSL's hashes (the upgrade's SHA-1 is CPython's own) nor sqlite3 (only
``-c`` reads the store): each about a quarter of the interpreter's start."""


@asynccontextmanager
async def served(home: Home, script: dict[str, Any]) -> AsyncIterator[tuple[MockLLMServer, str]]:
    async with mock_llm(script) as mock:
        process, url = await serve(home, "--base-url", mock.base_url)
        try:
            yield mock, url
        finally:
            stop(process)


def result_of(stdout: bytes) -> dict[str, Any]:
    return json.loads(stdout.decode().splitlines()[-1])


async def test_a_run_through_a_server_imports_no_event_loop(home: Home) -> None:
    record = home.root / "modules.json"
    async with served(home, {"turns": [{"text": "done"}]}) as (_, url):
        with trio.fail_after(HANG_GUARD):
            done = await trio.run_process(
                [sys.executable, "-c", _RUN_AND_RECORD, str(record), "run",
                 "--output-format", "json", "-p", "hi"],
                capture_stdout=True, capture_stderr=True, check=False,
                cwd=home.work, env=home.env,
            )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = result_of(done.stdout)
    assert result["result"] == "done" and result["runtime"] == url
    modules = json.loads(record.read_text())
    assert "protocol.client_blocking" in modules  # it did take the blocking path
    assert _loaded(modules, NOT_IN_A_RUN_THROUGH_A_SERVER) == []


async def test_an_edit_through_a_server_is_drawn_without_the_tool_catalogue(home: Home) -> None:
    """The event names the arguments that show the call as a diff, so the terminal
    draws it without importing the tools (and the kernel and trio under them)."""
    record = home.root / "modules.json"
    write = {"name": "write_file", "arguments": {"file_path": "new.txt", "content": "a\nb\n"}}
    async with served(home, {"turns": [{"tool_calls": [write]}, {"text": "Written."}]}):
        with trio.fail_after(HANG_GUARD):
            done = await trio.run_process(
                [sys.executable, "-c", _RUN_AND_RECORD, str(record), "run", "write it"],
                capture_stdout=True, capture_stderr=True, check=False,
                cwd=home.work, env=home.env,
            )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = done.stdout.decode()
    assert "+++ new.txt (written, 2 lines)" in shown and "    +b" in shown, shown
    assert (home.work / "new.txt").read_text() == "a\nb\n"
    modules = json.loads(record.read_text())
    assert "protocol.client_blocking" in modules
    assert _loaded(modules, ("actors.tools", *NOT_IN_A_RUN_THROUGH_A_SERVER)) == []


async def test_json_text_stream_json_and_the_last_message(home: Home) -> None:
    turns = shell_then_text("echo from-tool", final="The final answer.", usage={"input": 7})
    script = {"turns": turns["turns"] * 3 + turns["turns"][:1]}  # a call, an answer; thrice
    async with served(home, script) as (_, url):
        done = await home.troupe(
            "run", "--output-format", "json", "--output-last-message", "last.txt", "work"
        )
        text = await home.troupe("run", "work")
        streamed = await home.troupe("run", "--output-format", "stream-json", "work")
        limited = await home.troupe("run", "--max-turns", "1", "--output-format", "json", "work")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.decode().splitlines()) == 1  # nothing but the result
    result = result_of(done.stdout)
    assert result["status"] == "done" and result["result"] == "The final answer."
    assert result["num_turns"] == 2 and result["usage"]["input_tokens"] == 7 + 10
    assert result["runtime"] == url and result["session_id"].startswith("s-")
    assert (home.work / "last.txt").read_text() == "The final answer."

    assert text.returncode == 0, text.stderr
    lines = text.stdout.decode().splitlines()
    assert lines[0].startswith("session s-") and f"(server {url})" in lines[0]
    assert "from-tool" in text.stdout.decode() and "The final answer." in lines[-2]
    assert lines[-1].startswith("✓ done · 2 turns")

    events = [json.loads(line) for line in streamed.stdout.decode().splitlines()]
    assert events[0]["type"] == "event" and events[-1]["type"] == "result"
    assert [e["kind"] for e in events if e["type"] == "event"][-1] == "processing_end"

    assert limited.returncode == 53 and result_of(limited.stdout)["status"] == "turn_limit"


async def test_a_denied_call_is_said_on_stderr(home: Home) -> None:
    (home.work / "build").mkdir()
    async with served(home, shell_then_text("rm -rf build")) as (mock, _):
        done = await home.troupe("run", "--output-format", "json", "clean up")
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert (home.work / "build").exists()
    assert "denied: nobody to ask" in text_of(bodies[1])
    notices = [line for line in done.stderr.decode().splitlines() if "nobody to ask" in line]
    assert len(notices) == 1 and "rm -rf build" in notices[0]


SLOW_THEN_QUICK = {"turns": [{"text": "never seen", "delay": 30}, {"text": "Back again."}]}


async def test_ctrl_c_interrupts_the_session_and_exits_130(home: Home) -> None:
    async with served(home, SLOW_THEN_QUICK) as (mock, _):
        process = home.start(
            "run", "--output-format", "json", "wait for me",
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        with trio.fail_after(HANG_GUARD):
            await mock.wait_until(lambda m: len(m.requests) >= 1)
        process.send_signal(signal.SIGINT)
        out, err = await trio.to_thread.run_sync(lambda: process.communicate(timeout=HANG_GUARD))
        assert process.returncode == 130
        line = one_line(err)
        assert "interrupted; session s-" in line and "--resume s-" in line
        result = result_of(out)
        assert result["status"] == "interrupted" and result["exit_code"] == 130
        again = await home.troupe(
            "run", "--output-format", "json", "--resume", result["session_id"], "go on"
        )
        bodies = request_bodies(mock)
    assert again.returncode == 0, again.stderr
    assert result_of(again.stdout)["result"] == "Back again."
    # The interrupt reached the server: the second call did not wait for the first.
    assert "wait for me" in text_of(bodies[1]) and "go on" in text_of(bodies[1])
    assert "never seen" not in text_of(bodies[1])


async def test_timeout_exits_124_with_the_result_object(home: Home) -> None:
    async with served(home, SLOW_THEN_QUICK):
        done = await home.troupe("run", "--output-format", "json", "--timeout", "1", "slow")
        listed = await home.troupe("sessions", "--json")
    assert done.returncode == 124
    result = result_of(done.stdout)
    assert result["status"] == "timeout" and "--timeout 1 s" in result["error"]
    assert "timed out after 1 s" in one_line(done.stderr)
    assert result["session_id"] in listed.stdout.decode()


async def test_a_wrong_token_and_a_server_gone_are_said_as_before(home: Home) -> None:
    async with served(home, {"turns": [{"text": "done"}]}) as (_, url):
        wrong = await home.troupe("run", "--connect", url, "--token", "nope", "x")
    assert wrong.returncode == 2 and "refused the token" in one_line(wrong.stderr)
    gone = await home.troupe("run", "--connect", url, "--token", "t", "x")
    assert gone.returncode == 1 and "nothing is listening" in one_line(gone.stderr)
