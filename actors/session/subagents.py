"""A session's subagents (coding-agent-loop-spec §7): child sessions in the
supervision tree, each with its own history, sharing the parent's environment (or
a subdirectory of it) and gateway.

The manager lives in the parent session and runs in the parent's tasks. Depth is
enforced by the supervisor: a child is spawned with a depth limit that can only
shrink, so a session past ``max_subagent_depth`` cannot spawn at all, and is not
offered the tools. A child that fails, crashes or stops becomes a failed result,
never a failure of the parent.

A child spawned in the foreground does not outlive its parent's input. One spawned
in the background (``spawn_agent`` with ``background: true``) does: the parent's
input may end while it works, and when it finishes its result comes back to the
parent as a follow-up input (through the parent's own mailbox, so it starts an
input when the parent is idle and queues behind the current one when it is not),
unless the parent took the result itself (``collect_agent``, ``wait``) or
cancelled it. It is closed at the end of the input that took its result in; the
parent's close (an abort, the runtime's shutdown) closes it with everything else.
A subagent's own background subagents report to it before its input ends, since
its parent waits for that input's result and for no later one.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

import msgspec
import trio

from actors.kernel import ActorError, ActorRef, DepthLimitError
from actors.tools.core.agents import SPAWN_AGENT
from actors.tools.registry import ToolFailure
from actors.tools.truncation import truncate_output
from protocol.events import (
    EventData,
    SubagentClosedEvent,
    SubagentCompletedEvent,
    SubagentFailedEvent,
    SubagentInputEvent,
    SubagentSpawnedEvent,
    SubagentWorkspaceEvent,
)
from protocol.session import (
    AssistantTurn,
    GetSnapshot,
    Interrupt,
    Isolation,
    SessionConfig,
    SessionOutcome,
    SessionSnapshot,
    Steer,
    SubAgentResult,
    SubAgentStatus,
    Submit,
    WaitIdle,
)

if TYPE_CHECKING:
    from actors.session.isolation import Workspace  # made only for an isolated subagent


class ParentSession(Protocol):
    """What the manager needs of the session it serves (the session actor provides
    it): its settings and depth, its event stream, and its children's lives."""

    @property
    def config(self) -> SessionConfig: ...

    @property
    def agent_depth(self) -> int: ...

    def emit(self, data: EventData) -> object:
        """Add an event to the session's stream."""
        ...

    async def spawn_subagent(
        self, agent_id: str, working_dir: str | None, model: str | None, max_turns: int | None,
        depth_limit: int, workspace: Workspace | None = None,
    ) -> tuple[ActorRef, ActorRef | None]:  # fmt: skip
        """Start a child session (in a subdirectory view of the environment when
        ``working_dir`` is set, in ``workspace`` when it is isolated): its ref, and
        the view's ref if there is one."""
        ...

    async def open_workspace(
        self, agent_id: str, isolation: Isolation, merge: bool
    ) -> Workspace | None:
        """The isolated workspace of a new child (None for ``none``); see
        :mod:`actors.session.isolation`."""
        ...

    async def close_workspace(
        self, workspace: Workspace, agent_id: str, task: str
    ) -> SubagentWorkspaceEvent:
        """Undo a closed child's workspace; the event saying what became of it."""
        ...

    async def stop_child(self, ref: ActorRef) -> None:
        """Stop one of the session's children and wait until it has stopped."""
        ...

    def start_soon(self, task: Callable[[], Awaitable[None]]) -> None:
        """Run ``task`` in the session's own nursery (it ends with the session)."""
        ...

    def deliver(self, agent_id: str, text: str) -> None:
        """A background subagent's result, as a follow-up input of the session
        (dropped when the session is closing)."""
        ...

    def withdraw(self, text: str) -> None:
        """Drop a delivered follow-up still waiting for its turn (gone if not)."""
        ...


class BackgroundResult(msgspec.Struct, frozen=True):
    """A background subagent's result on its way to its parent's mailbox, where it
    becomes a follow-up input."""

    agent_id: str
    text: str


STATUS_TIMEOUT_S = 5.0
"""How long ``agent_status`` waits for a running child to describe itself."""
RESULT_CHARS = SPAWN_AGENT.limits.chars
"""The most of a background result that goes into the follow-up input."""


class SubAgent(msgspec.Struct, eq=False):
    id: str
    address: str
    ref: ActorRef
    scope: ActorRef | None = None
    """The subdirectory view of the parent's environment, when the task is scoped."""
    status: SubAgentStatus = "running"
    result: SubAgentResult | None = None
    finished: trio.Event = msgspec.field(default_factory=trio.Event)
    task: str = ""
    background: bool = False
    """Outlives the parent's input; its result comes back as a follow-up."""
    taken: bool = False
    """The parent has its latest result (collected, waited for or delivered)."""
    waiters: int = 0
    """Parent tool calls waiting for it now (they take its result when it ends)."""
    cancelled: bool = False
    """Being closed on purpose: its end is no result to deliver."""
    workspace: Workspace | None = None
    """Its own worktree or container (``isolation``), undone when it is closed."""
    delivery: str | None = None
    """The follow-up that brings its result, on its way: the parent's model may
    still collect the result first (a wait that ends as the child does)."""

    def kept_after_input(self) -> bool:
        """A background child still working, or with a result not taken in yet."""
        return self.background and (self.status == "running" or not self.taken)


class AgentManager:
    """Spawn, steer, wait for and close one session's subagents."""

    def __init__(self, parent: ParentSession, first_number: int = 1) -> None:
        """``first_number`` numbers the first subagent (``a-N``): a resumed session
        starts above the subagents it had, so no two are ever named alike."""
        self.parent = parent
        self.agents: dict[str, SubAgent] = {}
        self._ids = itertools.count(first_number)
        self._starting = 0
        """Spawns under way: they hold a place under the cap before they await."""

    def open_agents(self) -> list[SubAgent]:
        return [agent for agent in self.agents.values() if agent.status != "closed"]

    def running_in_background(self) -> list[str]:
        """The background subagents still working, by id (shown when an input ends)."""
        return [a.id for a in self.open_agents() if a.background and a.status == "running"]

    def get(self, agent_id: str) -> SubAgent:
        agent = self.agents.get(agent_id)
        if agent is None:
            known = ", ".join(self.agents) or "none"
            raise ToolFailure(f"No subagent {agent_id!r}. Known subagents: {known}.")
        return agent

    async def spawn(
        self,
        task: str,
        working_dir: str | None,
        model: str | None,
        max_turns: int | None,
        background: bool = False,
        isolation: Isolation | None = None,
        merge: bool = False,
    ) -> SubAgentResult:
        """Start a subagent on ``task``; its result says ``running``. The depth and
        count limits hold for background subagents as for the others. ``isolation``
        (None: the session's setting) gives it a worktree or container of its own."""
        parent = self.parent
        config = parent.config
        remaining = config.max_subagent_depth - parent.agent_depth
        if remaining <= 0:
            raise ToolFailure(
                f"Subagent depth limit reached: this session is at depth {parent.agent_depth} "
                f"of {config.max_subagent_depth} and cannot spawn subagents."
            )
        if len(self.open_agents()) + self._starting >= config.max_subagents:
            raise ToolFailure(
                f"Too many subagents: {config.max_subagents} are open. "
                "Wait for one to finish or close one first."
            )
        self._starting += 1
        try:
            isolated = (isolation or config.isolation, merge)
            return await self._spawn(
                task, working_dir, model, max_turns, remaining, background, isolated
            )
        finally:
            self._starting -= 1

    async def _spawn(
        self,
        task: str,
        working_dir: str | None,
        model: str | None,
        max_turns: int | None,
        remaining: int,
        background: bool,
        isolated: tuple[Isolation, bool] = ("none", False),
    ) -> SubAgentResult:
        agent_id = f"a-{next(self._ids)}"
        workspace = await self.parent.open_workspace(agent_id, *isolated)
        try:
            ref, scope = await self.parent.spawn_subagent(
                agent_id, working_dir, model, max_turns, depth_limit=remaining - 1,
                workspace=workspace,
            )  # fmt: skip
        except BaseException as exc:
            if workspace is not None:
                with trio.CancelScope(shield=True):
                    await self.parent.close_workspace(workspace, agent_id, task)
            if isinstance(exc, DepthLimitError):
                raise ToolFailure(f"Subagent depth limit: {exc}") from None
            raise
        agent = SubAgent(agent_id, ref.address, ref, scope, task=task, background=background)
        agent.workspace = workspace
        self.agents[agent_id] = agent
        self.parent.emit(SubagentSpawnedEvent(agent_id, ref.address, task, background))
        if workspace is not None:
            self.parent.emit(
                SubagentWorkspaceEvent(
                    agent_id, ref.address, workspace.isolation, "created", workspace.path,
                    workspace.branch, workspace.container,
                )
            )  # fmt: skip
        await self._start(agent, task)
        return self.result_of(agent)

    async def _start(self, agent: SubAgent, text: str) -> None:
        agent.status = "running"
        agent.taken = False
        agent.finished = trio.Event()
        await agent.ref.tell(Submit(text))
        finished = agent.finished
        self.parent.start_soon(lambda: self._watch(agent, finished))

    async def _watch(self, agent: SubAgent, finished: trio.Event) -> None:
        """Wait for the child's input to end and record its result."""
        try:
            outcome: SessionOutcome = await agent.ref.ask(WaitIdle(), timeout=None)
        except ActorError as exc:
            self.settle(agent, "failed", f"The subagent stopped: {exc}", 0)
        else:
            status: SubAgentStatus = "completed" if outcome.success else "failed"
            self.settle(agent, status, outcome.output, outcome.turns_used)
        finished.set()

    def settle(self, agent: SubAgent, status: SubAgentStatus, output: str, turns: int) -> None:
        """Record how the child's work ended (once; a closed child stays closed)."""
        if agent.status == "closed" or (agent.result is not None and agent.status != "running"):
            return
        agent.status = status
        agent.result = SubAgentResult(
            agent.id, agent.address, status, output, status == "completed", turns
        )
        event = SubagentCompletedEvent if status == "completed" else SubagentFailedEvent
        self.parent.emit(event(agent.id, agent.address, output, turns))
        if agent.waiters:  # a wait or collect_agent call of the parent takes it
            agent.taken = True
        elif agent.background and not agent.cancelled and self.parent.agent_depth == 0:
            # (A subagent gathers its own before its input ends: gather_background.)
            agent.taken = True
            agent.delivery = self._follow_up_text(agent)
            self.parent.deliver(agent.id, agent.delivery)
        agent.finished.set()

    def _follow_up_text(self, agent: SubAgent) -> str:
        """The follow-up input that brings a background result to the parent."""
        result = self.result_of(agent)
        head = (
            f"[Background subagent {agent.id} {result.status} after {result.turns_used} "
            f"turn{'s' if result.turns_used != 1 else ''}; its task: {_short(agent.task)}]"
        )
        output = truncate_output(result.output, RESULT_CHARS, "head_tail")
        return f"{head}\n{output}" if output else head

    def child_failed(self, address: str, error: str) -> None:
        """The supervisor reported a crash of one of our children."""
        for agent in self.agents.values():
            if agent.address == address:
                self.settle(agent, "failed", f"The subagent crashed: {error}", 0)

    async def send_input(self, agent_id: str, message: str, interrupt: bool) -> str:
        agent = self.get(agent_id)
        if agent.status == "closed":
            raise ToolFailure(f"Subagent {agent_id} is closed.")
        self.parent.emit(SubagentInputEvent(agent_id, agent.address, interrupt))
        if interrupt and agent.status == "running":
            await agent.ref.ask(Interrupt(immediate=True))
            await agent.finished.wait()
        if agent.status == "running":
            await agent.ref.tell(Steer(message))
            return f"Sent to {agent_id}; it will see the message after its current step."
        await self._start(agent, message)
        how = "Interrupted its work and started" if interrupt else "Started"
        return f"{how} a new input for {agent_id}."

    async def wait(self, agent_ids: list[str], timeout_ms: int | None) -> list[SubAgentResult]:
        """Each subagent's result once all have ended or the timeout passed; the
        results it returns are taken (a background one is not delivered again)."""
        agents = [self.get(agent_id) for agent_id in agent_ids]
        seconds = timeout_ms / 1000 if timeout_ms else float("inf")
        for agent in agents:
            agent.waiters += 1
        try:
            with trio.move_on_after(seconds):
                for agent in agents:
                    await agent.finished.wait()
        finally:
            for agent in agents:
                agent.waiters -= 1
        for agent in agents:
            if agent.status != "running":
                agent.taken = True
                self._withdraw_delivery(agent)
        return [self.result_of(agent) for agent in agents]

    def _withdraw_delivery(self, agent: SubAgent) -> None:
        """The model has the result from this wait: a follow-up bringing it that
        has not started yet would give it a second time."""
        if agent.delivery is not None:
            self.parent.withdraw(agent.delivery)
            agent.delivery = None

    def delivery_pending(self, agent_id: str, text: str) -> bool:
        """Whether the follow-up ``text`` of ``agent_id`` is still to be given (no
        wait of the parent's has taken its result since it was sent)."""
        agent = self.agents.get(agent_id)
        return agent is not None and agent.delivery == text

    async def gather_background(self) -> list[str]:
        """Wait for the background subagents still working; their results as
        follow-up texts, taken (so not delivered again). A subagent's input ends
        only after this: its parent waits for that input, and nothing would wait
        for a later one."""
        pending = [a for a in self.open_agents() if a.background and not a.taken]
        if not pending:
            return []
        await self.wait([agent.id for agent in pending], None)
        return [self._follow_up_text(agent) for agent in pending]

    async def collect(self, agent_id: str, timeout_ms: int | None) -> SubAgentResult:
        """One subagent's result, waiting up to ``timeout_ms`` (None: until it ends)."""
        (result,) = await self.wait([agent_id], timeout_ms)
        return result

    async def status(self, agent_id: str) -> str:
        """Where a subagent is, in words: its status, and while it runs what it is
        doing (asked of the child itself, briefly)."""
        agent = self.get(agent_id)
        kind = "background" if agent.background else "foreground"
        lines = [f"[{agent.id}] status={agent.status} ({kind}) task: {_short(agent.task)}"]
        if agent.status == "running":
            try:
                snapshot: SessionSnapshot = await agent.ref.ask(
                    GetSnapshot(), timeout=STATUS_TIMEOUT_S
                )
            except ActorError as exc:
                lines.append(f"(no answer from it: {exc})")
            else:
                steps = sum(isinstance(turn, AssistantTurn) for turn in snapshot.history)
                doing = snapshot.loop_state or snapshot.state
                lines.append(f"now: {doing}; model turns so far: {steps}")
        elif agent.result is not None:
            taken = "" if agent.taken else " (not collected yet)"
            lines.append(f"turns_used={agent.result.turns_used}{taken}")
        return "\n".join(lines)

    async def cancel(self, agent_id: str) -> SubAgentResult:
        """Stop a subagent's work now (its commands are killed) and close it; no
        result of it is delivered after this."""
        agent = self.get(agent_id)
        agent.cancelled = True
        agent.taken = True
        return await self.close(agent_id)

    def results(self) -> list[SubAgentResult]:
        """Every subagent this session has had, in the order they were spawned."""
        return [self.result_of(agent) for agent in self.agents.values()]

    def result_of(self, agent: SubAgent) -> SubAgentResult:
        where = agent.workspace.where() if agent.workspace is not None else ""
        if agent.status == "running" or agent.result is None:
            return SubAgentResult(agent.id, agent.address, agent.status, "", False, 0, where)
        return msgspec.structs.replace(agent.result, status=agent.status, workspace=where)

    async def close(self, agent_id: str) -> SubAgentResult:
        agent = self.get(agent_id)
        agent.cancelled = True  # its end is this close, not a result to deliver
        if agent.status != "closed":
            await self.parent.stop_child(agent.ref)
            if agent.scope is not None:
                await self.parent.stop_child(agent.scope)
            if agent.workspace is not None:
                event = await self.parent.close_workspace(agent.workspace, agent.id, agent.task)
                self.parent.emit(event)
            if agent.result is None:
                agent.result = SubAgentResult(agent.id, agent.address, "closed", "", False, 0)
            agent.status = "closed"
            agent.finished.set()
            self.parent.emit(SubagentClosedEvent(agent.id, agent.address))
        return self.result_of(agent)

    async def close_all(self) -> None:
        """No subagent outlives the parent itself."""
        for agent in self.open_agents():
            await self.close(agent.id)

    async def close_after_input(self) -> None:
        """At the end of the parent's input: every subagent but the background
        ones still working or whose result the parent has not taken in yet."""
        for agent in self.open_agents():
            if not agent.kept_after_input():
                await self.close(agent.id)


def _short(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
