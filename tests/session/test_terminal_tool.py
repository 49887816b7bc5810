"""The terminal tool (agentic-behavior-tool.md 6) in a session against mock-llm:
a persistent shell keeps cd and exported variables, ephemeral calls are refused
while it is open, and close and abort leave no process behind."""

from __future__ import annotations

from pathlib import Path

from protocol.events import ToolCallEndEvent
from protocol.session import Abort, SessionConfig
from tests.environments.helpers import alive
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns
from tests.waiting import wait_until_gone

CONFIG = SessionConfig(terminal_tool=True)
SETUP = "mkdir -p sub && cd sub && export GREETING=hello-from-the-shell"
CHECK = "pwd; echo $GREETING; sleep 300 & echo $! > ../background.pid; echo $$ > ../shell.pid"


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
        await wait_until_gone(pids(agent.workdir))


async def test_abort_ends_the_persistent_terminal(start_agent: StartAgent) -> None:
    script = turns([call("terminal", command=CHECK.replace("../", ""), persistent=True)], "ok")
    async with start_agent("anthropic", script, CONFIG) as agent:
        await agent.run("start something")
        running = pids(agent.workdir)
        assert alive(running) == running
        await agent.ref.ask(Abort("the user aborted"))
        await wait_until_gone(running)
