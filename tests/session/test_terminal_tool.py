"""The terminal tool (agentic-behavior-tool.md 6) in a session against mock-llm:
a persistent shell keeps cd and exported variables, ephemeral calls are refused
while it is open, and close and abort leave no process behind. Under the default
policy both run in the OS sandbox (its own PID namespace: what they start is found
on the host by a marker, not by the pids they see)."""

from __future__ import annotations

import uuid

import pytest
import trio

from environments.sandbox import find_bwrap
from protocol.events import ToolCallEndEvent
from protocol.session import Abort, SessionConfig
from tests.environments.helpers import survivors
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns
from tests.waiting import wait_until, wait_until_no_survivors

CONFIG = SessionConfig(terminal_tool=True)
SETUP = "mkdir -p sub && cd sub && export GREETING=hello-from-the-shell"


def check(marker: str) -> str:
    """Show the state, and leave a background job (marked) in the shell."""
    return f"pwd; echo $GREETING; bash -c 'sleep 300; : {marker}' >/dev/null 2>&1 & echo started"


def new_marker() -> str:
    return f"troupe-terminal-{uuid.uuid4().hex}"


async def test_persistent_terminal_keeps_state_refuses_ephemeral_and_closes(
    start_agent: StartAgent,
) -> None:
    marker = new_marker()
    script = turns(
        [call("terminal", command=SETUP, persistent=True)],
        [call("terminal", command=check(marker), persistent=True)],
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
        assert "started" in ends[1].output
        assert "persistent terminal is open" in ends[2].output
        assert ends[3].output == "The persistent terminal is closed."
        # After close, an ephemeral command starts afresh: root directory, no variable.
        assert ends[4].output.splitlines()[:2] == [str(agent.workdir), "unset"]
        await wait_until_no_survivors(marker)


async def test_abort_ends_the_persistent_terminal(start_agent: StartAgent) -> None:
    marker = new_marker()
    script = turns([call("terminal", command=check(marker), persistent=True)], "ok")
    async with start_agent("anthropic", script, CONFIG) as agent:
        await agent.run("start something")
        await wait_until(lambda: bool(survivors(marker)), what="the background job")
        await agent.ref.ask(Abort("the user aborted"))
        await wait_until_no_survivors(marker)


async def test_under_the_sandbox_the_terminal_is_confined_persistent_or_not(
    start_agent: StartAgent,
) -> None:
    """The terminal tool is no way around the policy's OS sandbox: ephemeral calls
    run confined (a write outside the working directory fails), and so does the
    persistent shell, which lives in one long-lived sandbox (state carries over)."""
    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap; .ci/run does)")
    config = SessionConfig(
        terminal_tool=True, policy="sandboxed", policy_overrides={"admin": "allow"}
    )
    script = turns(
        [call("terminal", command="touch /etc/troupe-terminal-sandbox; echo wrote > here.txt")],
        [call("terminal", command="export KEPT=yes; touch /etc/troupe-terminal-persistent",
              persistent=True)],
        [call("terminal", command="echo $KEPT > kept.txt; cat ~/.ssh/id_* 2>&1 | head -1",
              persistent=True)],
        "done",
    )  # fmt: skip
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("try the terminal")
        ends = agent.of(ToolCallEndEvent)
    assert not await trio.Path("/etc/troupe-terminal-sandbox").exists()
    assert not await trio.Path("/etc/troupe-terminal-persistent").exists()
    assert (await trio.Path(agent.workdir / "here.txt").read_text()).strip() == "wrote"
    assert "Read-only file system" in ends[1].output
    assert (await trio.Path(agent.workdir / "kept.txt").read_text()).strip() == "yes"
    assert not any(end.is_error for end in ends)
