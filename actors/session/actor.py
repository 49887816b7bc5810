"""The session actor: the agentic loop of coding-agent-loop-spec §2 as an actor.

Requests arrive in the mailbox (submit, steer, follow up, interrupt, abort, change
settings); the loop (:class:`~actors.session.loop.AgenticLoop`, an object the actor
owns) runs as a task in the actor's own nursery, so a steering message or an abort
is handled while the model streams or a command runs. Aborting cancels that task:
the model's HTTP stream closes, the environment requests of running tools are
abandoned (which kills their process groups), and the subagents are closed.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import msgspec
import trio

from actors.hooks import HookSet
from actors.kernel import Actor, ActorError, ActorRef, handler
from actors.models.fallback import FallbackModel, Route, as_routes
from actors.models.session import ModelSession
from actors.session.approvals import Approvals
from actors.session.events import EventHub, Subscription
from actors.session.hook_wiring import wire_hooks
from actors.session.lifecycle import (
    SessionBusy,
    SessionClosed,
    new_session_id,
    restarted_event,
    start_event,
)
from actors.session.loop import AgenticLoop, LoopParts
from actors.session.own_tools import offer, withdraw
from actors.session.path_checks import PathJudge
from actors.session.policy_gate import PolicyGate
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot, take_snapshot
from actors.session.resumed_round import ResumedRound
from actors.session.rewind import NotAnInput, RewindBusy, input_text
from actors.session.skill_wiring import wire_skills
from actors.session.snapshots import SnapshotCache
from actors.session.subagents import AgentManager, BackgroundResult
from actors.session.tool_round import ToolRunner
from actors.session.tree_snapshots import TreeSnapshots
from actors.session.turns import TurnLog
from actors.tools.cli_registry import load_cli_tools
from actors.tools.core.agentic import AGENTIC_TOOLS
from actors.tools.core.agents import AGENT_TOOLS
from actors.tools.core.loop_breakers import LOOP_BREAKING_TOOLS
from actors.tools.core.terminal import TERMINAL
from actors.tools.registry import ToolFailure
from actors.workspace import RestoreReport, restore_snapshot
from environments.wrappers import ScopedEnvironment
from protocol.environment import Describe, ResolvedPath, ResolvePath
from protocol.events import (
    ErrorEvent,
    EventData,
    ForkedFromEvent,
    InputInterruptedEvent,
    ModelFallbackEvent,
    RewindEvent,
    SessionEndEvent,
    SessionEvent,
    SubagentWorkspaceEvent,
    WarningEvent,
)
from protocol.session import (
    Abort,
    AnswerApproval,
    CloseSession,
    Compact,
    CompactionOutcome,
    ExtendLimit,
    FollowUp,
    GetSnapshot,
    Interrupt,
    Isolation,
    Rewind,
    RewindMode,
    RewindOutcome,
    SessionConfig,
    SessionOutcome,
    SessionSnapshot,
    SessionState,
    Steer,
    Submit,
    Subscribe,
    SubscribeRef,
    TreeSnapshot,
    Turn,
    UpdateConfig,
    WaitIdle,
)
from protocol.supervision import ChildFailed, ServiceRestarted

if TYPE_CHECKING:
    from actors.session.isolation import Isolator, Workspace
    from actors.tools.mcp import McpTools


SESSION_END_HOOKS_S = 30.0
"""How long SessionEnd hooks may hold up a closing session."""


SubagentHook = Callable[["SessionActor", str], None]
"""Called with a subagent's actor and its address before the subagent starts."""


class SessionActor(Actor):
    """One conversation with one model profile, in one execution environment.

    The actor owns an :class:`AgenticLoop` (the conversation and its processing)
    and an :class:`AgentManager` (its subagents), and serves the manager as its
    :class:`~actors.session.subagents.ParentSession`."""

    mailbox_size = 256

    def __init__(
        self,
        profile: ProviderProfile,
        environment: ActorRef,
        gateway: ActorRef | list[Route],
        config: SessionConfig | None = None,
        session_id: str | None = None,
        history: list[Turn] | None = None,
        first_seq: int = 1,
        agent_depth: int = 0,
        snapshot: EnvironmentSnapshot | None = None,
        resumed: ResumedRound | None = None,
        first_agent_number: int = 1,
        snapshots: SnapshotCache | None = None,
        hub: EventHub | None = None,
    ) -> None:
        """``history`` and ``first_seq`` resume a stored session: the conversation so
        far, and the sequence number its next event takes. ``agent_depth`` is how
        many subagent levels lie above this session (0 for a top-level session).
        ``gateway`` may be an ordered list of :class:`Route` (endpoint gateways and
        their models): the session falls back along it when one fails.
        ``snapshot`` reuses an environment snapshot (a subagent in its parent's
        environment sees the same one) instead of taking a new one at start.
        ``resumed`` is a tool round a crash cut short while it waited for an
        approval: its request is open again and the session carries on with it as
        soon as it starts.
        ``first_agent_number`` numbers its first subagent (a resumed session starts
        above those it had). The snapshot is taken at the first input, from
        ``snapshots`` when given (shared by the sessions on one environment).
        ``hub``: the session's event hub, made by a host that announced the session
        (its ``session_start``) before starting its actor (then ``first_seq`` is
        the hub's; see :attr:`announced`)."""
        self.id = session_id or new_session_id()
        config = config or SessionConfig()
        self._agent_depth = agent_depth
        self.profile = profile.derive()
        registry = self.profile.registry  # none of ours replaces a custom tool: own_tools
        if agent_depth < config.max_subagent_depth:
            offer(registry, AGENT_TOOLS, "subagent")
        else:
            withdraw(registry, AGENT_TOOLS)
        if config.loop_breaking_tools:
            offer(registry, LOOP_BREAKING_TOOLS, "loop-breaking")
        if config.agentic_mode:
            offer(registry, AGENTIC_TOOLS, "agentic-mode")
        if config.terminal_tool:
            offer(registry, [TERMINAL], TERMINAL.name)
        self.environment = environment
        self.gateway = gateway
        self.hub = hub if hub is not None else EventHub(self.id, first_seq)
        self.snapshot = snapshot
        self.snapshots = snapshots
        self._model: ModelSession | FallbackModel | None = None
        self.agents = AgentManager(self, first_agent_number)
        self.isolator: Isolator | None = None
        """Makes and undoes the subagents' worktrees and containers (on first need)."""
        self.own_workspace: Workspace | None = None
        """Set by the parent of an isolated subagent: its worktree or container."""
        self.subagent_hook: SubagentHook | None = None
        """Told of each subagent (at any depth below) before it starts, with its
        address: a host adds its sinks there (the server stores its events)."""
        self.loop = AgenticLoop(
            self.profile, config, self.hub, TurnLog(history or ()), agent_depth,
            self.agents.close_after_input, self.agents.running_in_background,
            self.agents.gather_background if agent_depth > 0 else None,
        )  # fmt: skip
        self._tools: ToolRunner | None = None
        self._mcp: McpTools | None = None
        """MCP servers of a top-level session; subagents share the parent's tools."""
        self._tree_snapshots: TreeSnapshots | None = None
        self.approvals = Approvals(self.hub.emit, self.loop.waiting_for_approval)
        self.fenced_paths: tuple[str, ...] = ()
        self.shadow_base: str | None = None
        """Set by the host before the session starts: where the shadow repositories of
        working-tree snapshots live on the environment's host (docs/snapshots.md);
        None: ``~/.cache/troupe/shadow`` there."""
        self.hook_set: HookSet | None = None
        self.skills_index = ""
        """The skills' list in the system prompt (docs/skills.md); a subagent gets
        its parent's, with its commands and its ``skill`` tool."""
        """The hooks this session runs (docs/hooks.md): loaded at its first input,
        or the parent's for a subagent."""
        """Set by the host before the session starts: Troupe's own directories, added
        to the policy's denied paths (see :class:`PolicyGate`); subagents inherit it."""
        self.origin: ForkedFromEvent | None = None
        """A fork's origin, set by the host before it starts: its first event after
        ``session_start``."""
        self.announced = False
        """Set by a host that emitted this session's ``session_start`` itself (a new
        session whose actor starts on its first request): not emitted again."""
        self.suspend_on_stop = False
        """Stopped on its own, only suspend (no ``session_end``): a fleet node
        handing the session to another node (issue 37)."""
        if resumed is not None:
            self.approvals.reopen(resumed.request, resumed.call_id)
            self.loop.resumed = resumed

    @property
    def config(self) -> SessionConfig:
        return self.loop.config

    @property
    def agent_depth(self) -> int:
        return self._agent_depth

    @property
    def state(self) -> SessionState:
        return self.loop.state

    # -- lifecycle -----------------------------------------------------------

    async def on_start(self) -> None:
        """Cheap on purpose: no process, no file, no model connection. Many sessions
        start and never receive input; what only input needs waits for it."""
        if self.snapshot is not None:
            root = self.snapshot.working_directory
        elif self.snapshots is not None:
            root = await self.snapshots.working_directory(self.environment)
        else:
            root = (await self.environment.ask(Describe(sandbox=False))).working_directory
        paths = PathJudge(self.environment, root)
        gate = PolicyGate(self.hub, self.approvals, root, paths, fenced=self.fenced_paths)
        self._tools = ToolRunner(self.hub, self.environment, root, self.agents, gate)
        if self.config.mcp_servers and self.agent_depth == 0:
            # Here, not at the top: the MCP SDK takes most of a second to import,
            # and a session without MCP servers never needs it.
            from actors.tools.mcp import McpTools

            self._mcp = McpTools(self.config.mcp_servers, self.ctx.nursery)
        if not self.announced:
            self.hub.emit(start_event(self.profile, self.config, root, self.agent_depth))
        if self.origin is not None:
            self.hub.emit(self.origin)
        if self.loop.resumed is not None:
            self.loop.begin()
            self.ctx.nursery.start_soon(self._continue)

    async def _prepare(self) -> None:
        """Before a model call: the snapshot, and the MCP servers' tools (each
        server starts on the first input that may need it)."""
        await self._ready_for_input()
        if self._mcp is not None:
            await self._mcp.load(
                self.profile.registry,
                lambda message: self.hub.emit(WarningEvent(message, category="mcp_server")),
            )

    async def _ready_for_input(self) -> None:
        """Before the first model call: the environment's snapshot (shared with the
        sessions that start with this one, when the host gave a cache), the model
        connection and the CLI tools the user and project files declare."""
        if self.loop.parts is not None:
            return
        if self.snapshot is None:
            self.snapshot = await self._look_around()
        assert self._tools is not None
        if self._model is None:
            self._model = await self._connect_model()
        cli_tools, problems = await load_cli_tools(self.environment, self._tools.working_dir)
        for tool in cli_tools:
            self.profile.registry.register(tool)
        for problem in problems:
            self.hub.emit(WarningEvent(problem, category="cli_tools"))
        if self.loop.prompt_commands is None:
            self.snapshot = await wire_skills(self.environment, self._tools.working_dir,
                                              self.profile, self.loop, self.snapshot)  # fmt: skip
        elif self.snapshot.skills != self.skills_index:  # a subagent: the parent's skills
            self.snapshot = msgspec.structs.replace(self.snapshot, skills=self.skills_index)
        self.skills_index = self.snapshot.skills
        if self._tools.hooks is None:
            self.hook_set, hooks = await wire_hooks(self.hook_set, self.environment, self._tools,
                                                    self.loop)  # fmt: skip
            if self.agent_depth == 0:
                await hooks.session_start(resumed=len(self.loop.history) > 0)
        if self.loop.parts is None:  # another caller may have finished while we waited
            self.ctx.nursery.start_soon(self._tools.emit_deltas)
            self.loop.parts = LoopParts(self._model, self._tools, self.snapshot, self._tree())

    async def _look_around(self) -> EnvironmentSnapshot:
        """The environment's snapshot, the model's connection made meanwhile (a
        gateway's first makes its HTTP client: CPU this process spends while the
        probe's processes run, rather than after them)."""
        connected: list[ModelSession | FallbackModel | Exception] = []

        async def connect() -> None:
            try:
                connected.append(await self._connect_model())
            except Exception as error:  # raised below, after the probe, as before
                connected.append(error)

        looked: EnvironmentSnapshot | Exception
        async with trio.open_nursery() as nursery:
            if self._model is None:
                nursery.start_soon(connect)
            try:
                if self.snapshots is not None:
                    looked = await self.snapshots.get(self.environment, self.profile)
                else:
                    looked = await take_snapshot(self.environment, self.profile)
            except Exception as error:  # raised here, not wrapped in the nursery's group
                looked = error
        if isinstance(looked, Exception):
            raise looked
        if connected:
            if isinstance(connected[0], Exception):
                raise connected[0]
            self._model = connected[0]
        return looked

    def _tree(self) -> TreeSnapshots | None:
        """The working tree's snapshots: a top-level session's (a subagent's changes
        land in its parent's rounds)."""
        if self._tree_snapshots is None and self.agent_depth == 0:
            assert self._tools is not None
            root = self._tools.working_dir
            self._tree_snapshots = TreeSnapshots(self.hub, self.environment, root, self.shadow_base)
        return self._tree_snapshots

    async def _connect_model(self) -> ModelSession | FallbackModel:
        routes = as_routes(self.gateway)
        if len(routes) == 1 and routes[0].model is None:
            return await ModelSession.connect(routes[0].gateway)
        return await FallbackModel.connect(routes, self._model_switched)

    def _model_switched(self, data: dict[str, object]) -> None:
        """The one place a fallback switch becomes an event."""
        self.hub.emit(msgspec.convert(data, ModelFallbackEvent))

    async def on_stop(self) -> None:
        """Stopped on its own (``stop(ref)``), the session ends for good; stopped
        because the whole runtime is going down, it is only suspended: the input in
        progress is interrupted but no ``session_end`` is emitted, so a host with a
        store resumes it next time."""
        if self.ctx.runtime.closing or self.suspend_on_stop:
            await self._suspend()
        else:
            await self._close("the session was stopped")

    async def _suspend(self) -> None:
        if self.loop.state == "closed":
            return
        if self.loop.state == "processing":
            self.hub.emit(InputInterruptedEvent("the runtime stopped while this input was running"))
        self.loop.cancel()
        await self.loop.wait_idle()
        if self._tools is not None:
            with trio.CancelScope(shield=True):
                await self._tools.close_terminal()
            self._tools.close()
        if self._mcp is not None:
            await self._mcp.close()
        self.hub.close()

    async def _session_end_hooks(self, reason: str) -> None:
        """SessionEnd hooks (docs/hooks.md) when the session closes. A session the
        runtime suspends (it stops while the session may be resumed) fires none: its
        environment stops at the same time, and it is not over."""
        hooks = self._tools.hooks if self._tools is not None else None
        if hooks is not None and self.agent_depth == 0:
            with trio.move_on_after(SESSION_END_HOOKS_S, shield=True):
                await hooks.session_end(reason)

    # -- requests ------------------------------------------------------------

    @handler
    async def submit(self, message: Submit) -> None:
        self._refuse_if_closed()
        if self.loop.state == "processing":
            self.loop.follow_ups.append(message.text)
            return
        self.loop.begin()
        self.ctx.nursery.start_soon(self._process, message.text)

    @handler
    async def steer(self, message: Steer) -> None:
        self._refuse_if_closed()
        self.loop.steering.append(message.text)

    @handler
    async def follow_up(self, message: FollowUp) -> None:
        self._refuse_if_closed()
        if self.loop.state == "processing":
            self.loop.follow_ups.append(message.text)
        else:
            await self.submit(Submit(message.text))

    @handler
    async def background_result(self, message: BackgroundResult) -> None:
        """A background subagent finished: its result is a follow-up input (none
        once the session is closing; the runtime's shutdown stops it too)."""
        if self.loop.state == "closed" or self.ctx.runtime.closing:
            return
        if not self.agents.delivery_pending(message.agent_id, message.text):
            return  # collected by the model while this was on its way
        await self.follow_up(FollowUp(message.text))

    @handler
    async def interrupt(self, message: Interrupt) -> None:
        await self.loop.interrupt(message.immediate)

    @handler
    async def abort(self, message: Abort) -> None:
        await self._close(message.reason)

    @handler
    async def close(self, message: CloseSession) -> None:
        await self._close("closed")

    @handler
    async def update_config(self, message: UpdateConfig) -> SessionConfig:
        self._refuse_if_closed()
        changes = {
            name: getattr(message, name)
            for name in message.__struct_fields__
            if getattr(message, name) is not msgspec.UNSET
        }
        self.loop.config = msgspec.structs.replace(self.loop.config, **changes)
        return self.loop.config

    @handler
    async def answer_approval(self, message: AnswerApproval) -> None:
        """A client's answer; the waiting tool call goes on with it."""
        self.approvals.resolve(
            message.request_id, message.approved, message.message, message.scope, message.by
        )

    @handler
    async def extend_limit(self, message: ExtendLimit) -> SessionConfig:
        """Continue the input that stopped at its iteration limit, with more room."""
        self._refuse_if_closed()
        rounds = self.loop.extend_limit(message.by)
        self.loop.begin()
        self.ctx.nursery.start_soon(self._continue, rounds)
        return self.loop.config

    @handler(concurrent=True)
    async def compact(self, message: Compact) -> CompactionOutcome:
        """Compact the conversation now (see :mod:`actors.session.compaction`). The
        session is busy meanwhile: an input submitted then waits for it."""
        self._refuse_if_closed()
        if self.loop.state == "processing":
            raise SessionBusy("the session is busy; compact it once the input has ended")
        self.loop.begin()
        try:
            await self._prepare()
            return await self.loop.compact(message.instructions)
        finally:
            self.loop.settle()
            if self.loop.follow_ups and self.loop.state != "closed":
                self.loop.begin()
                self.ctx.nursery.start_soon(self._process, self.loop.follow_ups.popleft())

    @handler(concurrent=True)
    async def rewind(self, message: Rewind) -> RewindOutcome:
        """Rewind the code, the conversation or both to just before an input (see
        :class:`~protocol.session.Rewind`). Refused while an input is processing:
        interrupt it first (a rewind never cancels work on its own). The session
        is busy meanwhile: an input submitted then waits for it."""
        self._refuse_if_closed()
        if self.loop.state == "processing":
            raise RewindBusy("the session is processing an input; interrupt it, then rewind")
        if not message.conversation and message.code_snapshot is None:
            raise NotAnInput("nothing to rewind: neither the conversation nor the code")
        history = self.loop.history
        if message.conversation:
            text = input_text(history, message.to_seq)
        else:  # the code alone: the input may have been rewound out of the conversation
            text = input_text(history.raw, message.to_seq)
        self.loop.begin()
        try:
            summary, usage = None, None
            if message.conversation and message.summarize:  # first: it may fail
                await self._prepare()
                summary, usage = await self.loop.summarize_cut(message.to_seq, message.instructions)
            report = None
            if message.code_snapshot is not None:
                report = await self._restore_code(message.code_snapshot)
            before = after = len(history)
            if message.conversation:
                before, after = self.loop.cut(message.to_seq, summary, usage)
            summarized = summary is not None
            mode: RewindMode = "conversation"
            if report is not None:
                mode = "both" if message.conversation else "code"
            outcome = RewindOutcome(
                to_seq=message.to_seq,
                mode=mode,
                text=text,
                turns_before=before,
                turns_after=after,
                summarized=summarized,
            )
            if report is not None:
                outcome = msgspec.structs.replace(
                    outcome,
                    changed=list(report.changed),
                    recreated=list(report.recreated),
                    deleted=list(report.deleted),
                    snapshot=report.commit,
                    undo_snapshot=report.before,
                )
            self.hub.emit(
                RewindEvent(
                    to_seq=message.to_seq,
                    mode=mode,
                    turns_before=before,
                    turns_after=after,
                    summarized=summarized,
                    files_changed=len(outcome.changed),
                    files_recreated=len(outcome.recreated),
                    files_deleted=len(outcome.deleted),
                    snapshot=outcome.snapshot,
                    undo_snapshot=outcome.undo_snapshot,
                )
            )
        finally:
            self.loop.settle()
            if self.loop.follow_ups and self.loop.state != "closed":
                self.loop.begin()
                self.ctx.nursery.start_soon(self._process, self.loop.follow_ups.popleft())
        return outcome

    async def _restore_code(self, snapshot: TreeSnapshot) -> RestoreReport:
        """The working tree back to ``snapshot``, byte for byte (docs/snapshots.md)."""
        return await restore_snapshot(
            self.environment,
            snapshot.commit,
            root=snapshot.root,
            shadow=snapshot.shadow,
            max_file_bytes=self.config.snapshot_max_file_bytes,
        )

    @handler(concurrent=True)
    async def wait_idle(self, message: WaitIdle) -> SessionOutcome:
        await self.loop.wait_idle()
        return self.loop.outcome()

    @handler
    async def get_snapshot(self, message: GetSnapshot) -> SessionSnapshot:
        loop = self.loop
        return SessionSnapshot(
            session_id=self.id,
            state=loop.state,
            profile=self.profile.id,
            model=loop.model_name,
            history=list(loop.history),
            config=loop.config,
            pending_steering=list(loop.steering),
            pending_follow_ups=list(loop.follow_ups),
            loop_state=loop.loop_state,
        )

    @handler
    async def subscribe(self, message: Subscribe) -> Subscription:
        return self.hub.subscribe(message.buffer, message.after_seq, message.buffer_bytes)

    @handler
    async def subscribe_ref(self, message: SubscribeRef) -> None:
        subscription = self.hub.subscribe(message.buffer)
        self.ctx.nursery.start_soon(self._forward, subscription, message.ref)

    @handler
    async def service_restarted(self, message: ServiceRestarted) -> None:
        """Something this session depends on restarted: tell the subscribers."""
        self.hub.emit(restarted_event(message))

    async def on_failure(self, error: Exception) -> None:
        """The actor failed: say so and end, so no subscriber waits for ever."""
        if self.state == "closed":
            return
        self.loop.state = "closed"
        reason = f"{type(error).__name__}: {error}"
        self.hub.emit(ErrorEvent(type(error).__name__, str(error), retryable=False))
        self.hub.emit(SessionEndEvent(reason, "closed", len(self.loop.history)))
        self.hub.close()

    @handler
    async def on_child_failed(self, message: ChildFailed) -> None:
        """A subagent crashed: that is a failed result for us, not our failure."""
        self.agents.child_failed(message.address, f"{message.error_type}: {message.message}")

    async def _process(self, text: str) -> None:
        tree = None
        if self.loop.parts is None:  # the first input: its snapshot alongside the preparation
            tree = self._tree()
            if tree is not None:
                tree.start_early(self.ctx.nursery, self.config)
        try:
            await self._prepare()
            if tree is not None and self.loop.hooks:  # a hook may change the tree first
                tree.drop_early()
            fatal = await self.loop.run_inputs(text)
        finally:
            if tree is not None:
                tree.drop_early()
            self.loop.settle()
        if fatal is not None:
            await self._close(fatal)

    async def _continue(self, rounds: int = 0) -> None:
        """Go on with the current input without a new user message: after
        ``extend_limit`` (``rounds`` already made) or after a restart that left a
        round unfinished (the loop finishes that round first)."""
        try:
            await self._prepare()
            fatal = await self.loop.run_inputs(None, rounds)
        finally:
            self.loop.settle()
        if fatal is not None:
            await self._close(fatal)

    async def _forward(self, subscription: Subscription, ref: ActorRef) -> None:
        """Tell ``ref`` each event; a ref that has stopped ends its subscription."""
        try:
            async for event in subscription:
                await ref.tell(event)
        except ActorError:
            pass
        finally:
            self.hub.unsubscribe(subscription)

    # -- serving the subagent manager (ParentSession) -------------------------

    def emit(self, data: EventData) -> SessionEvent:
        return self.hub.emit(data)

    def start_soon(self, task: Callable[[], Awaitable[None]]) -> None:
        self.ctx.nursery.start_soon(task)

    def deliver(self, agent_id: str, text: str) -> None:
        """Through the mailbox, so the follow-up is handled like any request."""
        if self.loop.state == "closed" or self.ctx.runtime.closing:
            return
        message = BackgroundResult(agent_id, text)
        self.ctx.nursery.start_soon(self._tell_self, message)

    def withdraw(self, text: str) -> None:
        with contextlib.suppress(ValueError):  # already started, or never queued
            self.loop.follow_ups.remove(text)

    async def _tell_self(self, message: BackgroundResult) -> None:
        with contextlib.suppress(ActorError):  # stopping: nothing is delivered any more
            await self.ctx.ref.tell(message)

    async def stop_child(self, ref: ActorRef) -> None:
        await self.ctx.stop(ref)

    async def spawn_subagent(
        self, agent_id: str, working_dir: str | None, model: str | None, max_turns: int | None,
        depth_limit: int, workspace: Workspace | None = None,
    ) -> tuple[ActorRef, ActorRef | None]:  # fmt: skip
        # The scope is our child, not the subagent's: a subagent at the depth limit
        # may not spawn anything, its environment view included.
        scope = None
        environment = workspace.environment if workspace is not None else self.environment
        if working_dir and workspace is not None:
            working_dir = await self._relative_to_root(working_dir)
        if working_dir:
            view = ScopedEnvironment(environment, working_dir)
            name = f"scopes/{agent_id}" if workspace is None else f"scopes/{agent_id}.dir"
            scope = await self.ctx.spawn(view, name=name)
        child = SessionActor(
            self.profile.derive(model=model or self.loop.model_name),  # ours unless told
            scope or environment,
            self.gateway,
            msgspec.structs.replace(self.config, max_turns=max_turns or 0, model=None),
            session_id=f"{self.id}.{agent_id}",
            agent_depth=self.agent_depth + 1,
            snapshot=None if scope or workspace else self.snapshot,
            snapshots=self.snapshots,
        )
        child.subagent_hook = self.subagent_hook
        child.own_workspace = workspace
        child.loop.cost.attach(self.loop.cost, agent_id)  # its spend counts toward our caps
        child.fenced_paths = self.fenced_paths
        child.hook_set = self.hook_set
        child.skills_index = self.skills_index
        child.loop.prompt_commands = self.loop.prompt_commands
        if self.subagent_hook is not None:
            self.subagent_hook(child, f"{self.ctx.address}/agents/{agent_id}")
        try:
            ref = await self.ctx.spawn(child, name=f"agents/{agent_id}", depth_limit=depth_limit)
        except BaseException:
            if scope is not None:
                await self.ctx.stop(scope)
            raise
        return ref, scope

    async def _relative_to_root(self, path: str) -> str:
        """``path`` (as the spawn tool resolved it, inside our working directory)
        relative to our working directory: the same subdirectory in an isolated
        child's own worktree or container ("" for the working directory itself)."""
        if posixpath.isabs(path):
            root = await self.environment.ask(ResolvePath("."), timeout=30)
            assert isinstance(root, ResolvedPath)
            path = posixpath.relpath(path, root.path)
        path = posixpath.normpath(path)
        if path == ".." or path.startswith("../"):
            raise ToolFailure(f"working_dir {path} is outside the working directory")
        return "" if path == "." else path

    def _isolator(self) -> Isolator:
        async def spawn(actor: Actor, name: str) -> ActorRef:
            return await self.ctx.spawn(actor, name=name)

        if self.isolator is None:  # the first isolated subagent's: imported then
            from actors.session.isolation import Isolator

            self.isolator = Isolator(self.environment, spawn, self.ctx.stop, self.own_workspace)
        return self.isolator

    async def open_workspace(
        self, agent_id: str, isolation: Isolation, merge: bool
    ) -> Workspace | None:
        if isolation == "none":
            return None
        config = self.config
        return await self._isolator().open(
            isolation, f"{self.id}.{agent_id}", agent_id, copies=config.worktree_copy,
            image=config.isolation_image, merge=merge,
        )  # fmt: skip

    async def close_workspace(
        self, workspace: Workspace, agent_id: str, task: str
    ) -> SubagentWorkspaceEvent:
        line = " ".join(task.split())[:200]
        closed = await self._isolator().close(workspace, f"troupe: {agent_id}: {line}")
        address = f"{self.ctx.address}/agents/{agent_id}"
        return SubagentWorkspaceEvent(
            agent_id, address, workspace.isolation, closed.state, workspace.path,
            workspace.branch, workspace.container, closed.detail,
        )  # fmt: skip

    # -- closing -------------------------------------------------------------

    def _refuse_if_closed(self) -> None:
        if self.loop.state == "closed":
            raise SessionClosed(f"session {self.id} is closed")

    async def _close(self, reason: str) -> None:
        """Cancel the work in progress, close the subagents, then end the session."""
        if self.loop.state == "closed":
            return
        self.loop.cancel()
        await self.loop.wait_idle()
        await self.agents.close_all()
        self.loop.close()
        if self._tools is not None:
            with trio.CancelScope(shield=True):
                await self._tools.close_terminal()
            self._tools.close()
        if self._mcp is not None:
            await self._mcp.close()
        await self._session_end_hooks(reason)
        self.hub.emit(SessionEndEvent(reason, "closed", len(self.loop.history)))
        self.hub.close()
