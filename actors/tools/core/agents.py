"""The subagent tools (coding-agent-loop-spec §7.2): spawn_agent, send_input, wait,
close_agent and list_agents; and for background subagents (``spawn_agent`` with
``background: true``, which outlive the input and report back as a follow-up):
agent_status, collect_agent, steer_agent and cancel_agent. They act through the
session's subagent manager."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import Subagents, ToolContext
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool, ToolFailure
from actors.tools.tool import OutputLimits
from protocol.session import Isolation, SubAgentResult


def _manager(context: ToolContext) -> Subagents:
    if context.agents is None:
        raise ToolFailure("Subagents are not available in this session.")
    return context.agents


def _describe(result: SubAgentResult) -> str:
    head = (
        f"[{result.agent_id}] status={result.status} success={str(result.success).lower()} "
        f"turns_used={result.turns_used}"
    )
    if result.workspace:
        head = f"{head}\nchanges: {result.workspace}"
    return f"{head}\n{result.output}" if result.output else head


class SpawnAgentParams(msgspec.Struct, frozen=True):
    task: Annotated[str, msgspec.Meta(description="What the subagent should do, in full")]
    working_dir: Annotated[
        str | None, msgspec.Meta(description="Subdirectory to scope the subagent to")
    ] = None
    model: Annotated[str | None, msgspec.Meta(description="Model override")] = None
    max_turns: Annotated[int | None, msgspec.Meta(description="Turn limit (0: none)")] = None
    background: Annotated[
        bool,
        msgspec.Meta(
            description="Run in the background: it may outlive your current turn, and its "
            "result comes back to you as a new message when it finishes"
        ),
    ] = False
    isolation: Annotated[
        Isolation | None,
        msgspec.Meta(
            description="Where it works: none (your directory), worktree (a git worktree "
            "of its own on a branch named after it) or container (a container of its own "
            "with a copy of the workspace); default: the session's setting"
        ),
    ] = None
    merge: Annotated[
        bool,
        msgspec.Meta(
            description="worktree only: when it is closed, merge its branch into yours "
            "(a conflict keeps the branch for review)"
        ),
    ] = False


async def spawn_agent(arguments: SpawnAgentParams, context: ToolContext) -> str:
    working_dir = arguments.working_dir
    agent = await _manager(context).spawn(
        arguments.task,
        context.path(working_dir) if working_dir else None,
        arguments.model,
        arguments.max_turns,
        arguments.background,
        arguments.isolation,
        arguments.merge,
    )
    where = f" It works in its own {agent.workspace}." if agent.workspace else ""
    if arguments.background:
        return (
            f"Spawned background subagent {agent.agent_id} ({agent.address}).{where} Go on with "
            "other work: its result comes back to you as a message when it finishes "
            "(agent_status, collect_agent, steer_agent and cancel_agent act on it meanwhile)."
        )
    return (
        f"Spawned subagent {agent.agent_id} ({agent.address}).{where} It works in parallel; "
        "use wait to collect its result."
    )


class SendInputParams(msgspec.Struct, frozen=True):
    agent_id: str
    message: str
    interrupt: Annotated[
        bool, msgspec.Meta(description="Stop the subagent's current step first")
    ] = False


async def send_input(arguments: SendInputParams, context: ToolContext) -> str:
    return await _manager(context).send_input(
        arguments.agent_id, arguments.message, arguments.interrupt
    )


class WaitParams(msgspec.Struct, frozen=True):
    agent_ids: Annotated[list[str], msgspec.Meta(description="Subagents to wait for")]
    timeout_ms: Annotated[int | None, msgspec.Meta(description="Stop waiting after this long")] = (
        None
    )


async def wait(arguments: WaitParams, context: ToolContext) -> str:
    results = await _manager(context).wait(arguments.agent_ids, arguments.timeout_ms)
    return "\n\n".join(_describe(result) for result in results)


class CloseAgentParams(msgspec.Struct, frozen=True):
    agent_id: str


async def close_agent(arguments: CloseAgentParams, context: ToolContext) -> str:
    return _describe(await _manager(context).close(arguments.agent_id))


class AgentParams(msgspec.Struct, frozen=True):
    agent_id: Annotated[str, msgspec.Meta(description="The subagent's id (a-1, ...)")]


async def agent_status(arguments: AgentParams, context: ToolContext) -> str:
    return await _manager(context).status(arguments.agent_id)


class CollectAgentParams(msgspec.Struct, frozen=True):
    agent_id: Annotated[str, msgspec.Meta(description="The subagent's id (a-1, ...)")]
    timeout_ms: Annotated[
        Annotated[int, msgspec.Meta(ge=0)] | None,
        msgspec.Meta(description="Stop waiting after this long (0: do not wait)"),
    ] = None


async def collect_agent(arguments: CollectAgentParams, context: ToolContext) -> str:
    timeout_ms = arguments.timeout_ms
    if timeout_ms == 0:
        timeout_ms = 1  # look without waiting (None waits until it ends)
    return _describe(await _manager(context).collect(arguments.agent_id, timeout_ms))


class SteerAgentParams(msgspec.Struct, frozen=True):
    agent_id: Annotated[str, msgspec.Meta(description="The subagent's id (a-1, ...)")]
    message: Annotated[str, msgspec.Meta(description="What to tell it")]


async def steer_agent(arguments: SteerAgentParams, context: ToolContext) -> str:
    return await _manager(context).send_input(arguments.agent_id, arguments.message, False)


async def cancel_agent(arguments: AgentParams, context: ToolContext) -> str:
    return _describe(await _manager(context).cancel(arguments.agent_id))


class ListAgentsParams(msgspec.Struct, frozen=True):
    pass


async def list_agents(arguments: ListAgentsParams, context: ToolContext) -> str:
    results = _manager(context).results()
    if not results:
        return "No subagents."
    return "\n".join(f"{r.agent_id} {r.address} {r.status}" for r in results)


SPAWN_AGENT = Tool(
    "spawn_agent",
    "Spawn a subagent to handle a scoped task autonomously, in parallel with you.",
    spawn_agent,
    SpawnAgentParams,
    category="write",
    paths=PathDeclaration(("working_dir",), confined=True),
    limits=OutputLimits(20_000, "head_tail"),
    hook_names=("Task", "Agent"),
)
AGENT_TOOLS = (
    SPAWN_AGENT,
    Tool(
        "send_input",
        "Send a message to a subagent (set interrupt to stop its current step first).",
        send_input,
        SendInputParams,
        category="write",
    ),
    Tool(
        "wait",
        "Wait for subagents to finish; returns each one's output, success and turns used.",
        wait,
        WaitParams,
        category="read",
    ),
    Tool(
        "close_agent",
        "Terminate a subagent and its own subagents.",
        close_agent,
        CloseAgentParams,
        category="write",
    ),
    Tool(
        "list_agents",
        "List this session's subagents and their status.",
        list_agents,
        ListAgentsParams,
        category="read",
    ),
    Tool(
        "agent_status",
        "Show what a subagent is doing now (status, current step, turns so far).",
        agent_status,
        AgentParams,
        category="read",
    ),
    Tool(
        "collect_agent",
        "Wait for one subagent's result (up to timeout_ms) and return it; a background "
        "subagent's result collected here is not sent to you again.",
        collect_agent,
        CollectAgentParams,
        category="read",
    ),
    Tool(
        "steer_agent",
        "Send a subagent a message: a running one sees it after its current step; a "
        "finished one starts working on it.",
        steer_agent,
        SteerAgentParams,
        category="write",
    ),
    Tool(
        "cancel_agent",
        "Stop a subagent now (its commands are killed) and close it; no result of it "
        "comes back after this.",
        cancel_agent,
        AgentParams,
        category="write",
    ),
)
