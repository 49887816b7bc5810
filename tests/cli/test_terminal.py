"""``troupe attach`` at a terminal: typing continues an idle session, steers a
working one, "stop" stops it after the current step, Ctrl-C detaches. What the
screen shows is asserted; what reached the model is read from the mock."""

from __future__ import annotations

import json

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, text_of
from tests.cli.terminal import Terminal
from tests.cli.test_errors import serve, stop


def blocking_shell(flag: str) -> dict[str, object]:
    command = f"while [ ! -f {flag} ]; do sleep 0.05; done; echo released-{flag}"
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


async def test_attach_continues_steers_stops_and_detaches(home: Home) -> None:
    script = {
        "turns": [
            {"text": "First done."},
            blocking_shell("go1"),
            blocking_shell("go2"),
            {"text": "never asked: stopped before this"},
        ],
        "repeat": False,
    }
    async with mock_llm(script) as mock:
        server, _ = await serve(home, "--base-url", mock.base_url)
        terminal: Terminal | None = None
        try:
            done = await home.troupe("run", "--output-format", "json", "first task")
            session = json.loads(done.stdout.decode().splitlines()[-1])["session_id"]
            terminal = Terminal(home.argv("attach", session), home.work, home.env)
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect("type to continue it (Ctrl-C detaches)")
                seen = await terminal.expect("First done.", seen)

                await terminal.type("second task\n")  # idle: a new input
                seen = await terminal.expect("> second task", seen)
                seen = await terminal.expect("→ shell(", seen)

                await terminal.type("mind the docs\n")  # working: steering
                seen = await terminal.expect("[steering queued] mind the docs", seen)
                (home.work / "go1").write_text("")
                seen = await terminal.expect("[steering] mind the docs", seen)
                seen = await terminal.expect("→ shell(", seen)

                await terminal.type("stop\n")
                seen = await terminal.expect("[stopping after the current step]", seen)
                (home.work / "go2").write_text("")
                seen = await terminal.expect("released-go2", seen)
                seen = await terminal.expect("[interrupted]", seen)

                await terminal.type("\x03")  # Ctrl-C
                await terminal.expect("detached; session", seen)
                code = await terminal.finish()
            assert code == 130
            assert "Traceback" not in terminal.screen
            bodies = request_bodies(mock)
            assert len(bodies) == 3  # stopped: the fourth turn was never asked for
            assert "second task" in text_of(bodies[1])
            assert "mind the docs" in text_of(bodies[2])
        finally:
            if terminal is not None:
                await terminal.aclose()
            stop(server)


async def test_run_at_a_terminal_steer_then_ctrl_c(home: Home) -> None:
    async with mock_llm({"turns": [blocking_shell("never")]}) as mock:
        terminal = Terminal(
            home.argv("run", "--base-url", mock.base_url, "long job"), home.work, home.env
        )
        try:
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect("→ shell(")
                await terminal.type("use tabs\n")  # typed while it works: steering
                seen = await terminal.expect("[steering queued] use tabs", seen)
                await terminal.type("\x03")
                await terminal.expect("interrupted; session s-", seen)
                assert await terminal.finish() == 130
        finally:
            await terminal.aclose()
    assert "Traceback" not in terminal.screen
