"""What a new user hits: each bad input is one line on stderr, no traceback, and the
documented exit code (2 bad input or configuration, 1 runtime failure, 130
interrupted). Every test runs the real ``troupe`` command."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

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


async def serve(home: Home, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """``troupe serve`` on a free port; returns the process and its URL."""
    process = home.start("serve", "--port", "0", *extra, stdout=subprocess.PIPE)
    assert process.stdout is not None
    line = await trio.to_thread.run_sync(process.stdout.readline)
    assert line.startswith(b"troupe server listening on "), line
    return process, line.decode().split()[-1]


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGINT)
    process.wait(HANG_GUARD)


async def test_no_api_key_is_one_line_exit_2(home: Home) -> None:
    done = await home.troupe("run", "say hello")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "OPENAI_API_KEY" in line and "--base-url" in line
    anthropic = await home.troupe("run", "--provider", "anthropic", "say hello")
    assert anthropic.returncode == 2 and "ANTHROPIC_API_KEY" in one_line(anthropic.stderr)


async def test_debug_shows_the_traceback(home: Home) -> None:
    done = await home.troupe("run", "say hello", TROUPE_DEBUG="1")
    assert done.returncode == 2
    assert b"Traceback" in done.stderr and done.stderr.strip().endswith(b"is set)")
    flag = await home.troupe("run", "--debug", "say hello")
    assert flag.returncode == 2 and b"Traceback" in flag.stderr


async def test_http_url_to_connect(home: Home) -> None:
    done = await home.troupe("run", "--connect", "http://127.0.0.1:7707/", "x")
    assert done.returncode == 2
    assert "use ws://127.0.0.1:7707/" in one_line(done.stderr)
    sessions = await home.troupe("sessions", "--connect", "localhost:7707")
    assert sessions.returncode == 2 and "not a server URL" in one_line(sessions.stderr)


async def test_nothing_listening_says_why(home: Home) -> None:
    done = await home.troupe("run", "--connect", "ws://127.0.0.1:9/", "--token", "t", "x")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "ws://127.0.0.1:9/" in line and "nothing is listening" in line


async def test_wrong_token_attach_missing_session_and_port_in_use(home: Home) -> None:
    process, url = await serve(home)
    try:
        for args in (
            ["sessions", "--token", "wrong"],
            ["sessions", "--connect", url, "--token", "x"],
        ):
            done = await home.troupe(*args)
            assert done.returncode == 2, done
            line = one_line(done.stderr)
            assert "refused the token" in line and "TROUPE_TOKEN" in line
            # no bare HTTP status (a word of its own: the URL's port may hold "401")
            assert re.search(r"\b401\b", line) is None and "cannot reach" not in line

        missing = await home.troupe("attach", "s-nothere")
        assert missing.returncode == 2
        assert "no session s-nothere" in one_line(missing.stderr)

        port = url.rsplit(":", 1)[1].strip("/")
        clash = await home.troupe("serve", "--port", port)
        assert clash.returncode == 1
        assert "already in use" in one_line(clash.stderr)
    finally:
        stop(process)


async def test_sessions_after_a_server_was_killed(home: Home) -> None:
    """A stale server.json (the server died without cleaning up) is not an error:
    the store still lists the sessions."""
    async with mock_llm(shell_then_text("echo hi")) as mock:
        process, _ = await serve(home, "--base-url", mock.base_url)
        done = await home.troupe("run", "--output-format", "json", "the task")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout.decode().splitlines()[-1])["session_id"]
        process.kill()
        process.wait(HANG_GUARD)
    assert (home.data / "server.json").exists()
    listed = await home.troupe("sessions")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr == b""
    assert session in listed.stdout.decode() and "the task" in listed.stdout.decode()


async def test_run_connect_reports_a_server_that_dies(home: Home) -> None:
    """``run --connect`` used to exit 1 silently when the server went away."""
    slow = {"turns": [{"text": "never seen", "delay": 30}]}
    async with mock_llm(slow) as mock:
        process, url = await serve(home, "--base-url", mock.base_url)
        token = (home.data / "token").read_text().strip()
        async with trio.open_nursery() as nursery:

            async def kill_when_asked() -> None:
                with trio.fail_after(HANG_GUARD):
                    await mock.wait_until(lambda m: len(m.requests) >= 1)
                process.kill()

            nursery.start_soon(kill_when_asked)
            done = await home.troupe("run", "--connect", url, "--token", token, "wait")
        process.wait(HANG_GUARD)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "lost the connection" in line and "troupe attach s-" in line


async def test_interrupt_run_exits_130_and_keeps_the_session(home: Home) -> None:
    slow = {"turns": [{"text": "never seen", "delay": 30}]}
    async with mock_llm(slow) as mock:
        process = home.start(
            "run", "--base-url", mock.base_url, "wait for me",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        with trio.fail_after(HANG_GUARD):
            await mock.wait_until(lambda m: len(m.requests) >= 1)
        process.send_signal(signal.SIGINT)
        _, err = await trio.to_thread.run_sync(lambda: process.communicate(timeout=HANG_GUARD))
    assert process.returncode == 130
    line = one_line(err)
    assert "interrupted" in line and "--resume s-" in line
    listed = await home.troupe("sessions", "--json")
    assert [json.loads(x)["task"] for x in listed.stdout.splitlines()] == ["wait for me"]
    session = line.split("--resume ")[1].split()[0]
    async with mock_llm({"turns": [{"text": "Back again."}]}) as mock:
        again = await home.troupe("run", "--base-url", mock.base_url, "--resume", session, "go on")
        (body,) = request_bodies(mock)
    assert again.returncode == 0, again.stderr
    assert b"Back again." in again.stdout
    assert "wait for me" in text_of(body) and "go on" in text_of(body)


async def test_interrupt_attach_detaches_with_130(home: Home) -> None:
    slow = {"turns": [{"text": "never seen", "delay": 30}]}
    async with mock_llm(slow) as mock:
        server, _ = await serve(home, "--base-url", mock.base_url)
        try:
            runner = home.start(
                "run",
                "busy",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            with trio.fail_after(HANG_GUARD):
                await mock.wait_until(lambda m: len(m.requests) >= 1)
            listed = await home.troupe("sessions", "--json")
            session = json.loads(listed.stdout.splitlines()[0])["session_id"]
            attach = home.start("attach", session, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert attach.stdout is not None
            first = await trio.to_thread.run_sync(attach.stdout.readline)
            assert f"attached to {session}".encode() in first
            attach.send_signal(signal.SIGINT)
            _, err = await trio.to_thread.run_sync(lambda: attach.communicate(timeout=HANG_GUARD))
            assert attach.returncode == 130
            assert "detached" in one_line(err) and "keeps running" in one_line(err)
            runner.send_signal(signal.SIGINT)
            await trio.to_thread.run_sync(lambda: runner.communicate(timeout=HANG_GUARD))
            assert runner.returncode == 130
        finally:
            stop(server)


async def test_bad_task_and_workdir(home: Home, tmp_path: Path) -> None:
    empty = await home.troupe("run", "--base-url", "http://127.0.0.1:9", "  ")
    assert empty.returncode == 2 and "empty" in one_line(empty.stderr)
    nowhere = await home.troupe("run", "--workdir", str(tmp_path / "nope"), "x")
    assert nowhere.returncode == 2 and "not a directory" in one_line(nowhere.stderr)
    both = await home.troupe("run", "-p", "a", "b")
    assert both.returncode == 2 and "once" in one_line(both.stderr)
