"""Background subagents in one session (``spawn_agent`` with ``background: true``):
they outlive the parent's input, their result comes back as a follow-up unless the
parent took it, and the tools that act on them (agent_status, collect_agent,
cancel_agent) and the limits (count, depth) work as for the others."""

from __future__ import annotations

import trio

from protocol.events import (
    ProcessingEndEvent,
    SubagentClosedEvent,
    SubagentCompletedEvent,
    ToolCallEndEvent,
    UserInputEvent,
)
from protocol.session import Abort, SessionConfig, Submit
from tests.environments.helpers import running_in
from tests.session.conftest import HANG_GUARD, Agent, StartAgent
from tests.session.scripts import body_text, call
from tests.session.test_subagents import bodies_of, conversations
from tests.waiting import wait_for_file, wait_until, wait_until_nothing_runs_in


def waits_for(name: str) -> list[dict[str, object]]:
    command = f"while [ ! -e {name} ]; do sleep 0.05; done; echo released {name}"
    return [call("shell", command=command, timeout_ms=600_000)]


def output_of(agent: Agent, tool: str) -> str:
    return next(e.output for e in agent.of(ToolCallEndEvent) if e.tool_name == tool)


async def drain_until_input(agent: Agent, count: int) -> None:
    """Until the session has seen ``count`` inputs (follow-ups included) end."""
    with trio.fail_after(HANG_GUARD):
        while len(agent.of(ProcessingEndEvent)) < count:
            await agent.drain_until("processing_end")


async def test_a_result_comes_back_as_a_follow_up_to_an_idle_parent(
    start_agent: StartAgent,
) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="BACKGROUND job", background=True)],
            "It runs; I am done for now.",
            "Got the background result.",
        ],
        BACKGROUND=[waits_for("go"), "background output"],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("PARENT: start a background job")
        (ended,) = agent.of(ProcessingEndEvent)
        assert ended.background_agents == ["a-1"]
        assert "Spawned background subagent a-1" in output_of(agent, "spawn_agent")
        assert agent.of(SubagentClosedEvent) == [], "it outlives the input"

        (agent.workdir / "go").touch()
        await drain_until_input(agent, 2)
        follow_up = agent.of(UserInputEvent)[-1].content
        assert follow_up.startswith("[Background subagent a-1 completed after 2 turns")
        assert follow_up.endswith("background output")
        assert agent.of(ProcessingEndEvent)[-1].background_agents == []
        last_request = bodies_of(agent, "anthropic", "PARENT")[-1]
        assert "background output" in body_text(last_request)
        # Taken in by that input, it is closed at its end.
        assert [e.agent_id for e in agent.of(SubagentClosedEvent)] == ["a-1"]


async def test_a_collected_result_is_not_delivered_again(start_agent: StartAgent) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="COLLECTED job", background=True)],
            [call("agent_status", agent_id="a-1")],
            [call("collect_agent", agent_id="a-1", timeout_ms=0)],
            [call("shell", command="touch go")],
            [call("collect_agent", agent_id="a-1", timeout_ms=60_000)],
            "Collected it myself.",
        ],
        COLLECTED=[waits_for("go"), "collected output"],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("PARENT: collect a background job")
        collected = [e.output for e in agent.of(ToolCallEndEvent) if e.tool_name == "collect_agent"]
        assert collected[0].startswith("[a-1] status=running")
        assert collected[1].startswith("[a-1] status=completed success=true turns_used=2")
        assert collected[1].endswith("collected output")
        status = output_of(agent, "agent_status")
        assert status.startswith("[a-1] status=running (background) task: COLLECTED job")
        assert "model turns so far" in status
        (ended,) = agent.of(ProcessingEndEvent)
        assert ended.background_agents == []
        assert len(agent.of(SubagentCompletedEvent)) == 1
        assert [e.agent_id for e in agent.of(SubagentClosedEvent)] == ["a-1"]
        assert len(agent.of(UserInputEvent)) == 1, "no follow-up for a collected result"


async def test_a_result_collected_after_it_was_sent_as_a_follow_up_comes_once(
    start_agent: StartAgent,
) -> None:
    """The child ends while the parent is busy (its result is sent as a follow-up
    that waits for the parent's input to end), then the parent's model collects
    it: the model has it, and the waiting follow-up is withdrawn, not given again."""
    hold = "while [ ! -e proceed ]; do sleep 0.05; done; echo proceeding"
    script = conversations(
        [
            [call("spawn_agent", task="RACED job", background=True)],
            [call("shell", command=f"touch go; {hold}", timeout_ms=600_000)],
            [call("collect_agent", agent_id="a-1", timeout_ms=60_000)],
            "Collected it myself.",
            "Nothing else.",
        ],
        RACED=[waits_for("go"), "raced output"],
    )
    first, second = "PARENT: collect a background job", "PARENT: anything else?"
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit(first))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("subagent_completed")
        (agent.workdir / "proceed").touch()
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("processing_end")
        assert output_of(agent, "collect_agent").endswith("raced output")
        await agent.run(second)  # a follow-up still queued would have come first
        inputs = [event.content for event in agent.of(UserInputEvent)]
        assert inputs == [first, second], "the collected result came again"


async def test_cancel_kills_its_command_and_delivers_nothing(start_agent: StartAgent) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="DOOMED job", background=True)],
            "Started.",
            [call("cancel_agent", agent_id="a-1")],
            "Cancelled.",
        ],
        DOOMED=[
            [call("shell", command="touch started; trap '' TERM; sleep 600", timeout_ms=600_000)]
        ],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("PARENT: start, then cancel")
        await wait_for_file(agent.workdir / "started")
        await agent.run("cancel it")
        assert output_of(agent, "cancel_agent").startswith("[a-1] status=closed")
        await wait_until_nothing_runs_in(agent.workdir)
        assert agent.of(ProcessingEndEvent)[-1].background_agents == []
        assert len(agent.of(UserInputEvent)) == 2


async def test_the_count_limit_holds_for_background_agents(start_agent: StartAgent) -> None:
    spawns = [[call("spawn_agent", task=f"CAPPED-{n}", background=True)] for n in range(3)]
    script = conversations(
        [*spawns, "Tried three."], **{f"CAPPED-{n}": [waits_for(f"go{n}")] for n in range(3)}
    )
    async with start_agent("anthropic", script, SessionConfig(max_subagents=2)) as agent:
        await agent.run("PARENT: spawn three in the background")
        outputs = [e.output for e in agent.of(ToolCallEndEvent)]
        assert sum("Spawned background subagent" in o for o in outputs) == 2
        assert outputs[-1].startswith("Too many subagents: 2 are open")
        assert agent.of(ProcessingEndEvent)[-1].background_agents == ["a-1", "a-2"]


async def test_aborting_the_parent_stops_its_background_agents(start_agent: StartAgent) -> None:
    long = "cd {name} && trap '' TERM && sleep 600"
    script = conversations(
        [
            [call("spawn_agent", task="LONG-1 job", background=True)],
            [call("spawn_agent", task="LONG-2 job", background=True)],
            "Both started.",
        ],
        **{
            f"LONG-{n}": [[call("shell", command=long.format(name=f"l{n}"), timeout_ms=600_000)]]
            for n in (1, 2)
        },
    )
    async with start_agent("anthropic", script) as agent:
        for n in (1, 2):
            (agent.workdir / f"l{n}").mkdir()
        await agent.run("PARENT: two long background jobs")
        assert agent.of(ProcessingEndEvent)[-1].background_agents == ["a-1", "a-2"]
        await wait_until(
            lambda: bool(running_in(agent.workdir / "l1") and running_in(agent.workdir / "l2")),
            what="both commands",
        )
        with trio.fail_after(HANG_GUARD):
            await agent.ref.ask(Abort("stop everything"))
            await wait_until_nothing_runs_in(agent.workdir)
            await agent.drain_until("session_end")
        assert sorted(e.agent_id for e in agent.of(SubagentClosedEvent)) == ["a-1", "a-2"]
        assert len(agent.of(UserInputEvent)) == 1, "no follow-up once the parent is closing"


async def test_a_result_that_arrives_mid_input_waits_for_its_end(start_agent: StartAgent) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="QUICK job", background=True)],
            [call("shell", command="while [ ! -e hold ]; do sleep 0.05; done")],
            "First input done.",
            "Then the result.",
        ],
        QUICK=["quick output"],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("PARENT: a quick background job"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("subagent_completed")
        (agent.workdir / "hold").touch()
        await drain_until_input(agent, 1)
        inputs = [e.content for e in agent.of(UserInputEvent)]
        assert len(inputs) == 2 and inputs[1].endswith("quick output")
        kinds = agent.kinds()
        assert kinds.index("processing_end") > kinds.index("user_input", 1), (
            "one processing run: the follow-up came before the input ended"
        )


async def test_a_subagents_background_results_reach_it_before_its_input_ends(
    start_agent: StartAgent,
) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="MIDDLE job")],
            [call("wait", agent_ids=["a-1"], timeout_ms=60_000)],
            "The middle one reported.",
        ],
        MIDDLE=[
            [call("spawn_agent", task="LEAF job", background=True)],
            "Leaf started.",
            "Middle got the leaf's result.",
        ],
        LEAF=[waits_for("leaf.go"), "leaf output"],
    )
    config = SessionConfig(max_subagent_depth=2)
    async with start_agent("anthropic", script, config) as agent:
        await agent.ref.tell(Submit("PARENT: two levels, the lower in the background"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("subagent_spawned")
        await wait_until(
            lambda: bool(bodies_of(agent, "anthropic", "LEAF")), what="the leaf's first call"
        )
        (agent.workdir / "leaf.go").touch()
        await drain_until_input(agent, 1)
        waited = output_of(agent, "wait")
        assert waited.startswith("[a-1] status=completed success=true")
        assert waited.endswith("Middle got the leaf's result.")
        middle = bodies_of(agent, "anthropic", "MIDDLE")
        assert "leaf output" in body_text(middle[-1])
