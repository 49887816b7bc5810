"""The terminal tool (agentic-behavior-tool.md 6) in a session against mock-llm:
a persistent shell keeps cd and exported variables, ephemeral calls are refused
while it is open, and close and abort leave no process behind."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from environments.sandbox import find_bwrap
from protocol.events import ToolCallEndEvent
from protocol.session import Abort, SessionConfig
from tests.environments.helpers import alive
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns
from tests.waiting import wait_until_gone

CONFIG = SessionConfig(terminal_tool=True)
SETUP = "mkdir -p sub && cd sub && export GREETING=hello-from-the-shell"
CHECK = "pwd; echo $GREETING; sleep 300 & echo $! > background.pid; echo $$ > shell.pid"
"""Writes its pid files where the terminal is: ``../`` from ``sub`` would be outside
the working directory for a terminal restarted there, so the policy would ask."""


def pids(workdir: Path) -> list[int]:
    return [int((workdir / name).read_text()) for name in ("background.pid", "shell.pid")]


async def test_persistent_terminal_keeps_state_refuses_ephemeral_and_closes(
    start_agent: StartAgent,
) -> None:
    script = turns(
        [call("terminal", command=SETUP, persistent=True)],
        [call("terminal", command=CHECK, persistent=True)],
        [call("terminal", command="echo ephemeral")],
        [call("terminal", close=True)],
        [call("terminal", command="pwd; echo ${GREETING:-unset}")],
        "done",
    )
    async with start_agent("anthropic", script, CONFIG) as agent:
        await agent.run("use the terminal")
        ends = agent.of(ToolCallEndEvent)
        assert [end.is_error for end in ends] == [False, False, True, False, False]
        assert ends[1].output.splitlines()[:2] == [
            str(agent.workdir / "sub"),
            "hello-from-the-shell",
        ]
        assert "persistent terminal is open" in ends[2].output
        assert ends[3].output == "The persistent terminal is closed."
        # After close, an ephemeral command starts afresh: root directory, no variable.
        assert ends[4].output.splitlines()[:2] == [str(agent.workdir), "unset"]
        await wait_until_gone(pids(agent.workdir / "sub"))


async def test_abort_ends_the_persistent_terminal(start_agent: StartAgent) -> None:
    script = turns([call("terminal", command=CHECK, persistent=True)], "ok")
    async with start_agent("anthropic", script, CONFIG) as agent:
        await agent.run("start something")
        running = pids(agent.workdir)
        assert alive(running) == running
        await agent.ref.ask(Abort("the user aborted"))
        await wait_until_gone(running)


async def test_under_the_sandbox_the_terminal_confines_or_refuses(
    start_agent: StartAgent,
) -> None:
    """The terminal tool is no way around the policy's OS sandbox: ephemeral calls
    run confined (a write outside the working directory fails), and the persistent
    shell, opened once outside any command's confinement, is refused."""
    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap; .ci/run does)")
    config = SessionConfig(
        terminal_tool=True, policy="sandboxed", policy_overrides={"admin": "allow"}
    )
    script = turns(
        [call("terminal", command="touch /etc/troupe-terminal-sandbox; echo wrote > here.txt")],
        [call("terminal", command="echo hi", persistent=True)],
        "done",
    )
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("try the terminal")
        ends = agent.of(ToolCallEndEvent)
    assert not await trio.Path("/etc/troupe-terminal-sandbox").exists()
    assert (await trio.Path(agent.workdir / "here.txt").read_text()).strip() == "wrote"
    assert ends[1].is_error and "persistent terminal is off" in ends[1].output
