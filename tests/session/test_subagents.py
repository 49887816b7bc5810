"""Subagents (coding-agent-loop-spec §7): child sessions under the supervisor, with a
scripted model per conversation (the parent's and each child's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from actors.mockllm.wires import first_user_text
from actors.session.actor import SessionActor
from actors.session.own_tools import ToolNameConflict
from actors.session.profiles import anthropic_profile
from actors.tools.registry import Tool
from protocol.events import (
    AssistantTextEndEvent,
    SubagentClosedEvent,
    SubagentCompletedEvent,
    SubagentFailedEvent,
    SubagentInputEvent,
    SubagentSpawnedEvent,
    ToolCallEndEvent,
)
from protocol.session import Abort, SessionConfig, Submit, Subscribe
from tests.session.conftest import HANG_GUARD, WIRE_OF_PROFILE, Agent, StartAgent
from tests.session.scripts import body_text, call, tool_names
from tests.waiting import wait_for_file, wait_until_nothing_runs_in


def conversations(parent: list[Any], **children: list[Any]) -> dict[str, Any]:
    """The parent's turns (its first message holds PARENT), then each child's by task."""

    def steps(items: list[Any]) -> list[dict[str, Any]]:
        return [
            {"text": s} if isinstance(s, str) else s if isinstance(s, dict) else {"tool_calls": s}
            for s in items
        ]

    listed = [{"match": "PARENT", "turns": steps(parent)}]
    listed += [{"match": task, "turns": steps(turns)} for task, turns in children.items()]
    return {"conversations": listed}


def bodies_of(agent: Agent, profile: str, match: str) -> list[Any]:
    wire = WIRE_OF_PROFILE[profile]
    return [b for b in agent.request_bodies() if match in first_user_text(wire, b)]


def wait_output(agent: Agent) -> str:
    return next(e.output for e in agent.of(ToolCallEndEvent) if e.tool_name == "wait")


@pytest.mark.parametrize("profile", ["openai", "anthropic", "gemini"])
async def test_five_subagents_run_in_parallel_and_report_back(
    start_agent: StartAgent, profile: str
) -> None:
    # Each child waits (up to 10 s) until all five have started: "peers 5" proves overlap.
    child_command = (
        "touch start.N; sleep 1; for i in $(seq 200); do "
        "[ $(ls start.* | wc -l) -ge 5 ] && break; sleep 0.05; done; "
        'echo "peers $(ls start.* | wc -l)" > out.N'
    )
    children = {
        f"child-task-{n}": [
            [call("shell", command=child_command.replace("N", str(n)))],
            f"child {n} done",
        ]
        for n in range(5)
    }
    spawns = [call("spawn_agent", task=f"child-task-{n}: write out.{n}") for n in range(5)]
    ids = [f"a-{n}" for n in range(1, 6)]
    script = conversations(
        [spawns, [call("wait", agent_ids=ids, timeout_ms=60_000)], "All five finished."], **children
    )
    async with start_agent(profile, script) as agent:
        with trio.fail_after(HANG_GUARD):
            await agent.run("PARENT: split the work five ways")
        for n in range(5):
            assert (agent.workdir / f"out.{n}").read_text() == "peers 5\n"
        assert wait_output(agent).count("status=completed success=true") == 5
        assert len(agent.of(SubagentSpawnedEvent)) == 5
        assert len(agent.of(SubagentCompletedEvent)) == 5
        assert {e.address for e in agent.of(SubagentSpawnedEvent)} == {
            f"/sessions/{agent.actor.id}/agents/{i}" for i in ids
        }
        child_tools = tool_names(bodies_of(agent, profile, "child-task-0")[0])
        assert "spawn_agent" not in child_tools, "at the depth limit, no subagent tools"
        assert "spawn_agent" in tool_names(bodies_of(agent, profile, "PARENT")[0])


async def test_depth_limit_holds_below_the_first_level(start_agent: StartAgent) -> None:
    script = conversations(
        [[call("spawn_agent", task="MIDDLE task")], [call("wait", agent_ids=["a-1"])], "ok"],
        MIDDLE=[
            [call("spawn_agent", task="LEAF task")],
            [call("wait", agent_ids=["a-1"])],
            "mid ok",
        ],
        LEAF=[[call("spawn_agent", task="TOO DEEP")], "leaf ok"],
    )
    async with start_agent("anthropic", script, SessionConfig(max_subagent_depth=2)) as agent:
        await agent.run("PARENT: go two levels down")
        leaf_bodies = bodies_of(agent, "anthropic", "LEAF")
        assert "spawn_agent" not in tool_names(leaf_bodies[0])
        assert "Unknown tool: spawn_agent" in body_text(leaf_bodies[1])
        assert "spawn_agent" in tool_names(bodies_of(agent, "anthropic", "MIDDLE")[0])
        assert bodies_of(agent, "anthropic", "TOO DEEP") == []


async def test_cap_on_live_subagents(start_agent: StartAgent) -> None:
    spawns = [call("spawn_agent", task=f"capped-{n}") for n in range(3)]
    script = conversations([spawns, "ok"], **{f"capped-{n}": ["fine"] for n in range(3)})
    async with start_agent("anthropic", script, SessionConfig(max_subagents=2)) as agent:
        await agent.run("PARENT: spawn three")
        outputs = [e.output for e in agent.of(ToolCallEndEvent)]
        assert sum("Spawned subagent" in o for o in outputs) == 2
        assert sum(o.startswith("Too many subagents: 2 are open") for o in outputs) == 1


async def test_send_input_reaches_a_running_child(start_agent: StartAgent) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="BUSY child")],
            [call("send_input", agent_id="a-1", message="EXTRA-INSTRUCTION")],
            [call("wait", agent_ids=["a-1"])],
            "ok",
        ],
        BUSY=[[call("shell", command="sleep 1")], "busy done", "saw the extra instruction"],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("PARENT: steer the child")
        child = bodies_of(agent, "anthropic", "BUSY")
        assert any("EXTRA-INSTRUCTION" in body_text(b) for b in child[1:])
        assert agent.of(SubagentInputEvent)[0].agent_id == "a-1"


async def test_wait_with_a_timeout_then_close_kills_the_childs_command(
    start_agent: StartAgent,
) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="SLOW child")],
            [call("wait", agent_ids=["a-1"], timeout_ms=1500)],
            [call("close_agent", agent_id="a-1")],
            "closed it",
        ],
        SLOW=[
            [
                call(
                    "shell",
                    command="echo $$ > slow.pid; trap '' TERM; sleep 600",
                    timeout_ms=600_000,
                )
            ]
        ],
    )
    async with start_agent("anthropic", script) as agent:
        with trio.fail_after(HANG_GUARD):
            await agent.run("PARENT: wait a little, then give up")
        assert "status=running success=false" in wait_output(agent)
        assert agent.of(SubagentClosedEvent)[0].agent_id == "a-1"
        await wait_until_nothing_runs_in(agent.workdir)


async def test_aborting_the_parent_stops_every_descendant(start_agent: StartAgent) -> None:
    long = "echo $$ > {name}.pid; trap '' TERM; sleep 600"
    script = conversations(
        [
            [call("spawn_agent", task="LONG-1"), call("spawn_agent", task="LONG-2")],
            [call("wait", agent_ids=["a-1", "a-2"])],
        ],
        **{
            f"LONG-{n}": [[call("shell", command=long.format(name=f"l{n}"), timeout_ms=600_000)]]
            for n in (1, 2)
        },
    )
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("PARENT: start two long jobs"))
        await wait_for_file(agent.workdir / "l1.pid")
        await wait_for_file(agent.workdir / "l2.pid")
        children = [
            agent.ref._cell.runtime.ref(f"/sessions/{agent.actor.id}/agents/a-{n}") for n in (1, 2)
        ]
        with trio.fail_after(HANG_GUARD):
            await agent.ref.ask(Abort("stop everything"))
            for child in children:
                await child.wait_stopped()
            await wait_until_nothing_runs_in(agent.workdir)
            await agent.drain_until("session_end")
        assert len(agent.of(SubagentClosedEvent)) == 2


async def test_failing_child_is_a_failed_result_not_a_failed_parent(
    start_agent: StartAgent,
) -> None:
    script = conversations(
        [
            [call("spawn_agent", task="DOOMED child")],
            [call("wait", agent_ids=["a-1"])],
            "It failed; moving on.",
        ],
        DOOMED=[{"fault": {"status": 500, "message": "provider down"}}],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("PARENT: try a doomed child")
        assert "status=failed success=false" in wait_output(agent)
        assert agent.of(SubagentFailedEvent)[0].agent_id == "a-1"
        assert agent.of(AssistantTextEndEvent)[-1].text == "It failed; moving on."
        assert agent.ref.alive


async def test_a_client_can_follow_a_subagents_own_events(start_agent: StartAgent) -> None:
    script = conversations(
        [[call("spawn_agent", task="WATCHED child")], [call("wait", agent_ids=["a-1"])], "ok"],
        WATCHED=[[call("shell", command="sleep 0.5; echo watched")], "watched done"],
    )
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("PARENT: let me watch"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("subagent_spawned")
            address = agent.of(SubagentSpawnedEvent)[0].address
            child_events = await agent.ref._cell.runtime.ref(address).ask(Subscribe())
            kinds = []
            async for event in child_events:
                kinds.append(event.kind)
                if isinstance(event.data, ToolCallEndEvent):
                    assert event.data.output.startswith("watched")
                    break
            await agent.drain_until("processing_end")
        assert "tool_call_start" in kinds


async def test_a_subagent_runs_on_the_parents_model_unless_told_otherwise(
    start_agent: StartAgent,
) -> None:
    """A session started with ``model`` set (``--model``, the config file) passes
    that model on to its subagents; ``spawn_agent``'s own ``model`` still wins."""
    script = conversations(
        [
            [call("spawn_agent", task="INHERIT task"), call("spawn_agent", task="OWN task",
                                                            model="child-own-model")],
            [call("wait", agent_ids=["a-1", "a-2"], timeout_ms=60_000)],
            "both done",
        ],
        **{"INHERIT task": ["inherited"], "OWN task": ["own"]},
    )  # fmt: skip
    config = SessionConfig(model="parent-chosen-model")
    async with start_agent("anthropic", script, config) as agent:
        with trio.fail_after(HANG_GUARD):
            await agent.run("PARENT: two helpers")
        models = {
            task: {b["model"] for b in bodies_of(agent, "anthropic", task)}
            for task in ("PARENT", "INHERIT task", "OWN task")
        }
        prompts = {
            task: body_text(bodies_of(agent, "anthropic", task)[0]["system"])
            for task in ("INHERIT task", "OWN task")
        }
    assert models == {
        "PARENT": {"parent-chosen-model"},
        "INHERIT task": {"parent-chosen-model"},
        "OWN task": {"child-own-model"},
    }
    # and each child's system prompt names the model it runs on
    assert "Model: parent-chosen-model" in prompts["INHERIT task"]
    assert "Model: child-own-model" in prompts["OWN task"]


async def test_a_subagent_works_in_the_working_dir_it_was_given(start_agent: StartAgent) -> None:
    """``spawn_agent(working_dir=...)``: the child's relative paths, commands and
    system prompt start in that subdirectory; the parent's stay where they were."""
    script = conversations(
        [
            [call("spawn_agent", task="SCOPED task", working_dir="pkg")],
            [call("wait", agent_ids=["a-1"], timeout_ms=60_000)],
            [call("read_file", file_path="inside.txt")],
            "done",
        ],
        **{
            "SCOPED task": [
                [call("shell", command="pwd > where.txt")],
                [call("read_file", file_path="inside.txt")],
                [call("write_file", file_path="made.txt", content="by the child\n")],
                "scoped done",
            ]
        },
    )
    async with start_agent("anthropic", script) as agent:
        (agent.workdir / "pkg").mkdir()
        (agent.workdir / "pkg" / "inside.txt").write_text("the package's file\n")
        (agent.workdir / "inside.txt").write_text("the top-level file\n")
        with trio.fail_after(HANG_GUARD):
            await agent.run("PARENT: work in pkg")
        package = agent.workdir / "pkg"
        assert (package / "where.txt").read_text().strip() == str(package)
        assert (package / "made.txt").read_text() == "by the child\n"
        assert not (agent.workdir / "made.txt").exists()
        child = bodies_of(agent, "anthropic", "SCOPED task")
        assert f"Working directory: {package}\n" in child[0]["system"][0]["text"]
        assert "the package's file" in body_text(child[2])
        assert "the top-level file" not in body_text(child[2])
        assert "the top-level file" in body_text(bodies_of(agent, "anthropic", "PARENT")[-1])
        assert "status=completed success=true" in wait_output(agent)


async def test_a_subagent_tool_never_replaces_a_custom_tool(
    start_agent: StartAgent, tmp_path: Path
) -> None:
    """A profile given its own ``wait`` tool: the session that would offer the
    subagent ``wait`` is refused when it is made, with the name; without subagent
    tools (max_subagent_depth 0) the custom tool stays and is the one called."""

    async def mine(arguments: dict[str, Any], context: Any) -> str:
        return "the custom wait ran"

    custom = Tool("wait", "Wait for the build.", mine, json_schema={"type": "object"})
    profile = anthropic_profile()
    profile.registry.register(custom)
    environment = object()  # never reached: the check comes first
    with pytest.raises(ToolNameConflict, match="'wait' has the name of a subagent tool"):
        SessionActor(profile, environment, environment)  # type: ignore[arg-type]
    assert profile.registry.get("wait") is custom

    script = conversations([[call("wait")], "ok"])
    config = SessionConfig(max_subagent_depth=0)
    async with start_agent("anthropic", script, config, registry_extra=[custom]) as agent:
        await agent.run("PARENT: wait for it")
        (end,) = agent.of(ToolCallEndEvent)
        assert (end.output, end.is_error) == ("the custom wait ran", False)
        assert "spawn_agent" not in tool_names(agent.request_bodies()[0])
