"""``troupe run --timeout SECONDS``: a wall-clock limit for harnesses. Past it the
work is stopped, the command the agent was running is gone by the time
``troupe`` exits, and the single result object still comes out (status
``timeout``, exit code 124, as GNU ``timeout`` uses)."""

from __future__ import annotations

import json
import secrets

from tests.cli.conftest import Home, home, mock_llm
from tests.environments.helpers import running_in, survivors

__all__ = ["home"]


async def test_the_limit_stops_the_work_and_leaves_no_process(home: Home) -> None:
    marker = f"troupe-timeout-{secrets.token_hex(4)}"
    command = f"echo started > started.txt; exec sleep 300 # {marker}"
    script = {
        "turns": [
            {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
            {"text": "never reached"},
        ]
    }
    # 5 s: the limit counts from the input sent, so the command (one scripted turn
    # away) has long started; and it stays under the shell's own 10 s default.
    async with mock_llm(script) as mock:
        result = await home.troupe(
            "run", "--base-url", mock.base_url, "--timeout", "5", "--output-format", "json",
            "--approval", "never-ask", "-p", "wait a long time",
        )  # fmt: skip
    assert (home.work / "started.txt").exists(), "the command ran before the limit"
    assert survivors(marker) == [] and running_in(home.work) == []
    assert result.returncode == 124, result.stderr.decode()
    lines = result.stdout.decode().splitlines()
    assert len(lines) == 1, lines
    outcome = json.loads(lines[0])
    assert (outcome["type"], outcome["status"], outcome["exit_code"]) == ("result", "timeout", 124)
    assert outcome["is_error"] is True and outcome["session_id"]
    stderr = result.stderr.decode().strip().splitlines()
    assert len(stderr) == 1 and stderr[0].startswith("troupe run: timed out after 5 s"), stderr


async def test_a_limit_that_is_not_a_number_of_seconds_is_bad_input(home: Home) -> None:
    result = await home.troupe("run", "--base-url", "http://127.0.0.1:9/v1", "--timeout", "0", "x")
    assert result.returncode == 2
    assert "--timeout must be a number of seconds above 0" in result.stderr.decode()
