"""The session actor: the agentic loop of coding-agent-loop-spec §2 as an actor.

Requests arrive in the mailbox (submit, steer, follow up, interrupt, abort, change
settings); the loop (:mod:`actors.session.loop`) runs as a task in the actor's own
nursery, so a steering message or an abort is handled while the model streams or
a command runs. Aborting cancels that task: the model's HTTP stream closes, the
environment requests of running tools are abandoned (which kills their process
groups), and the subagents are closed.
"""

from __future__ import annotations

import secrets
from collections import deque

import msgspec
import trio

from actors.kernel import Actor, ActorError, ActorRef, Rejection, handler
from actors.models.fallback import FallbackModel, Route, as_routes
from actors.models.session import ModelSession
from actors.session.events import EventHub, Subscription
from actors.session.loop import AgenticLoop
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot, take_snapshot
from actors.session.subagents import AgentManager
from actors.session.tool_round import ToolRunner
from actors.tools.core.agents import AGENT_TOOLS
from protocol.session import (
    Abort,
    CloseSession,
    FollowUp,
    GetSnapshot,
    Interrupt,
    SessionConfig,
    SessionOutcome,
    SessionSnapshot,
    SessionState,
    Steer,
    Submit,
    Subscribe,
    SubscribeRef,
    Turn,
    UpdateConfig,
    WaitIdle,
)
from protocol.supervision import ChildFailed


class SessionClosed(Rejection):
    code = "session_closed"


class SessionActor(AgenticLoop, Actor):
    """One conversation with one model profile, in one execution environment."""

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
    ) -> None:
        """``history`` and ``first_seq`` resume a stored session: the conversation so
        far, and the sequence number its next event takes. ``agent_depth`` is how
        many subagent levels lie above this session (0 for a top-level session).
        ``gateway`` may be an ordered list of :class:`Route` (endpoint gateways and
        their models): the session falls back along it when one fails.
        ``snapshot`` reuses an environment snapshot (a subagent in its parent's
        environment sees the same one) instead of taking a new one at start."""
        self.id = session_id or f"s-{secrets.token_hex(4)}"
        self.config = config or SessionConfig()
        self.agent_depth = agent_depth
        self.profile = profile.derive()
        for tool in AGENT_TOOLS:
            if agent_depth < self.config.max_subagent_depth:
                self.profile.registry.register(tool)
            else:
                self.profile.registry.unregister(tool.name)
        self.environment = environment
        self.gateway = gateway
        self.state: SessionState = "idle"
        self.history: list[Turn] = list(history or ())
        self.steering: deque[str] = deque()
        self.follow_ups: deque[str] = deque()
        self.hub = EventHub(self.id, first_seq)
        self.snapshot = snapshot
        self.model: ModelSession | FallbackModel | None = None
        self.tools: ToolRunner | None = None
        self.agents = AgentManager(self)
        self._init_loop()

    # -- lifecycle -----------------------------------------------------------

    async def on_start(self) -> None:
        routes = as_routes(self.gateway)
        if len(routes) == 1 and routes[0].model is None:
            self.model = await ModelSession.connect(routes[0].gateway)
        else:
            self.model = await FallbackModel.connect(routes, self._model_switched)
        if self.snapshot is None:
            self.snapshot = await take_snapshot(self.environment, self.profile)
        self.tools = ToolRunner(
            self.hub, self.environment, self.snapshot.working_directory, self.agents
        )
        self.ctx.nursery.start_soon(self.tools.emit_deltas)
        self.hub.emit(
            "session_start",
            profile=self.profile.id,
            model=self._model_name(),
            working_directory=self.snapshot.working_directory,
            agent_depth=self.agent_depth,
        )

    def _model_switched(self, data: dict[str, object]) -> None:
        """The one place a fallback switch becomes an event."""
        self.hub.emit("model_fallback", **data)

    async def on_stop(self) -> None:
        await self._close("the runtime is stopping")

    # -- requests ------------------------------------------------------------

    @handler
    async def submit(self, message: Submit) -> None:
        self._refuse_if_closed()
        if self.state == "processing":
            self.follow_ups.append(message.text)
            return
        self.state = "processing"
        self._idle = trio.Event()
        self.ctx.nursery.start_soon(self._run_inputs, message.text)

    @handler
    async def steer(self, message: Steer) -> None:
        self._refuse_if_closed()
        self.steering.append(message.text)

    @handler
    async def follow_up(self, message: FollowUp) -> None:
        self._refuse_if_closed()
        if self.state == "processing":
            self.follow_ups.append(message.text)
        else:
            await self.submit(Submit(message.text))

    @handler
    async def interrupt(self, message: Interrupt) -> None:
        if self.state != "processing":
            return
        if not message.immediate:
            self._stop_after_step = True
            return
        self._interrupting = True
        if self._work is not None:
            self._work.cancel()
        await self._idle.wait()

    @handler
    async def abort(self, message: Abort) -> None:
        await self._close(message.reason)

    @handler
    async def close(self, message: CloseSession) -> None:
        await self._close("closed")

    @handler
    async def update_config(self, message: UpdateConfig) -> SessionConfig:
        changes = {
            name: getattr(message, name)
            for name in message.__struct_fields__
            if getattr(message, name) is not msgspec.UNSET
        }
        self.config = msgspec.structs.replace(self.config, **changes)
        return self.config

    @handler(concurrent=True)
    async def wait_idle(self, message: WaitIdle) -> SessionOutcome:
        await self._idle.wait()
        return SessionOutcome(
            state=self.state,
            output=self._last_text,
            success=self._stop_reason == "completed" and self.state != "closed",
            turns_used=self._model_turns,
            stop_reason="closed" if self.state == "closed" else self._stop_reason,
            error=self._last_error,
        )

    @handler
    async def get_snapshot(self, message: GetSnapshot) -> SessionSnapshot:
        return SessionSnapshot(
            session_id=self.id,
            state=self.state,
            profile=self.profile.id,
            model=self._model_name(),
            history=list(self.history),
            config=self.config,
            pending_steering=list(self.steering),
            pending_follow_ups=list(self.follow_ups),
        )

    @handler
    async def subscribe(self, message: Subscribe) -> Subscription:
        return self.hub.subscribe(message.buffer, message.after_seq)

    @handler
    async def subscribe_ref(self, message: SubscribeRef) -> None:
        subscription = self.hub.subscribe(message.buffer)
        self.ctx.nursery.start_soon(self._forward, subscription, message.ref)

    @handler
    async def on_child_failed(self, message: ChildFailed) -> None:
        """A subagent crashed: that is a failed result for us, not our failure."""
        self.agents.child_failed(message.address, f"{message.error_type}: {message.message}")

    async def _forward(self, subscription: Subscription, ref: ActorRef) -> None:
        """Tell ``ref`` each event; a ref that has stopped ends its subscription."""
        try:
            async for event in subscription:
                await ref.tell(event)
        except ActorError:
            pass
        finally:
            self.hub.unsubscribe(subscription)

    # -- closing -------------------------------------------------------------

    def _refuse_if_closed(self) -> None:
        if self.state == "closed":
            raise SessionClosed(f"session {self.id} is closed")

    async def _close(self, reason: str) -> None:
        """Cancel the work in progress, close the subagents, then end the session."""
        if self.state == "closed":
            return
        if self._work is not None:
            self._work.cancel()
        await self._idle.wait()
        await self.agents.close_all()
        self.state = "closed"
        self.steering.clear()
        self.follow_ups.clear()
        if self.tools is not None:
            self.tools.close()
        self.hub.emit("session_end", reason=reason, state="closed", turns=len(self.history))
        self.hub.close()
