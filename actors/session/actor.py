"""The session actor: the agentic loop of coding-agent-loop-spec §2 as an actor.

Requests arrive in the mailbox (submit, steer, follow up, abort, change settings);
the loop itself runs as a task in the actor's own nursery, so a steering message
or an abort is handled while the model streams or a command runs. Aborting cancels
that task: the model's HTTP stream closes, and the environment requests of running
tools are abandoned, which kills their process groups.
"""

from __future__ import annotations

import secrets
import time
from collections import deque

import msgspec
import trio

from actors.kernel import Actor, ActorError, ActorRef, Rejection, handler
from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    ContextLengthError,
    ModelError,
)
from actors.models.session import ModelSession
from actors.session.events import EventHub, Subscription
from actors.session.history import MessageLog, history_chars
from actors.session.loop_detection import call_signature, detect_loop, loop_warning
from actors.session.model_turn import call_model
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot, build_system_prompt, take_snapshot
from actors.session.tool_round import ToolRunner
from protocol.llm import Message, Request, Response, ToolCall, ToolChoice
from protocol.session import (
    Abort,
    AssistantTurn,
    CloseSession,
    FollowUp,
    GetSnapshot,
    SessionConfig,
    SessionSnapshot,
    SessionState,
    Steer,
    SteeringTurn,
    Submit,
    Subscribe,
    SubscribeRef,
    ToolResultsTurn,
    Turn,
    UpdateConfig,
    UserTurn,
    WaitIdle,
)


class SessionClosed(Rejection):
    code = "session_closed"


class SessionActor(Actor):
    """One conversation with one model profile, in one execution environment."""

    mailbox_size = 256

    def __init__(
        self,
        profile: ProviderProfile,
        environment: ActorRef,
        gateway: ActorRef,
        config: SessionConfig | None = None,
        session_id: str | None = None,
        history: list[Turn] | None = None,
        first_seq: int = 1,
    ) -> None:
        """``history`` and ``first_seq`` resume a stored session: the conversation so
        far, and the sequence number its next event takes."""
        self.id = session_id or f"s-{secrets.token_hex(4)}"
        self.profile = profile
        self.environment = environment
        self.gateway = gateway
        self.config = config or SessionConfig()
        self.state: SessionState = "idle"
        self.history: list[Turn] = list(history or ())
        self.steering: deque[str] = deque()
        self.follow_ups: deque[str] = deque()
        self.hub = EventHub(self.id, first_seq)
        self.snapshot: EnvironmentSnapshot | None = None
        self.model: ModelSession | None = None
        self._work: trio.CancelScope | None = None
        self._idle = trio.Event()
        self._idle.set()
        self._signatures: list[str] = []
        self._messages = MessageLog()
        self._model_turns = sum(1 for turn in self.history if isinstance(turn, AssistantTurn))
        self._history_chars = 0
        self._chars_counted = 0
        self._fatal: str | None = None
        self.tools: ToolRunner | None = None

    # -- lifecycle -----------------------------------------------------------

    async def on_start(self) -> None:
        self.model = await ModelSession.connect(self.gateway)
        self.snapshot = await take_snapshot(self.environment, self.profile)
        self.tools = ToolRunner(self.hub, self.environment, self.snapshot.working_directory)
        self.ctx.nursery.start_soon(self.tools.emit_deltas)
        self.hub.emit(
            "session_start",
            profile=self.profile.id,
            model=self._model_name(),
            working_directory=self.snapshot.working_directory,
        )

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
    async def wait_idle(self, message: WaitIdle) -> SessionState:
        await self._idle.wait()
        return self.state

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
        return self.hub.subscribe(message.buffer)

    @handler
    async def subscribe_ref(self, message: SubscribeRef) -> None:
        subscription = self.hub.subscribe(message.buffer)
        self.ctx.nursery.start_soon(self._forward, subscription, message.ref)

    async def _forward(self, subscription: Subscription, ref: ActorRef) -> None:
        """Tell ``ref`` each event; a ref that has stopped ends its subscription."""
        try:
            async for event in subscription:
                await ref.tell(event)
        except ActorError:
            pass
        finally:
            self.hub.unsubscribe(subscription)

    # -- the loop ------------------------------------------------------------

    async def _run_inputs(self, text: str) -> None:
        """Process ``text``, then each queued follow-up, until none is left."""
        try:
            with trio.CancelScope() as scope:
                self._work = scope
                next_text: str | None = text
                while next_text is not None and self._fatal is None:
                    await self._process_input(next_text)
                    next_text = self.follow_ups.popleft() if self.follow_ups else None
        finally:
            self._work = None
            if self.state == "processing":
                self.state = "idle"
            if self._fatal is None and self.state != "closed":
                self.hub.emit("processing_end", state=self.state)
            self._idle.set()
        if self._fatal is not None:
            await self._close(self._fatal)

    async def _process_input(self, text: str) -> None:
        self.state = "processing"
        self.history.append(UserTurn(text, time.time()))
        self.hub.emit("user_input", content=text)
        self._drain_steering()
        rounds = 0
        context_warned = False
        while True:
            config = self.config
            if config.max_tool_rounds_per_input and rounds >= config.max_tool_rounds_per_input:
                self.hub.emit("turn_limit", limit="max_tool_rounds_per_input", round=rounds)
                return
            if config.max_turns and self._model_turns >= config.max_turns:
                self.hub.emit("turn_limit", limit="max_turns", total_turns=self._model_turns)
                return
            response = await self._ask_model()
            if response is None:
                return
            self._record(response)
            if not context_warned:
                context_warned = self._warn_about_context()
            calls = response.tool_calls
            if not calls:
                if response.text.rstrip().endswith("?"):
                    self.state = "awaiting_input"
                return
            rounds += 1
            assert self.tools is not None
            results = await self.tools.run_round(calls, self.profile, self.config)
            self.history.append(ToolResultsTurn(results, time.time()))
            self._drain_steering()
            self._watch_for_loops(calls)

    def _request(self) -> Request:
        assert self.snapshot is not None
        config = self.config
        system = build_system_prompt(self.profile, self.snapshot, config.user_instructions)
        return Request(
            model=self._model_name(),
            messages=[Message.system(system), *self._messages.messages(self.history)],
            tools=self.profile.tools(),
            tool_choice=ToolChoice("auto"),
            reasoning_effort=config.reasoning_effort,
            provider_options=self.profile.provider_options(),
        )

    async def _ask_model(self) -> Response | None:
        """The model's answer, or None after reporting why there is none."""
        assert self.model is not None
        try:
            return await call_model(
                self.model, self._request(), self.hub, self.profile.supports_streaming
            )
        except (AuthenticationError, AccessDeniedError) as error:
            self._report(error)
            self._fatal = f"{type(error).__name__}: {error}"
        except ContextLengthError as error:
            self.hub.emit("warning", kind="context_length", message=str(error))
        except ModelError as error:
            self._report(error)
        return None

    def _report(self, error: ModelError) -> None:
        self.hub.emit(
            "error",
            error_type=type(error).__name__,
            message=str(error),
            retryable=bool(getattr(error, "retryable", False)),
        )

    def _record(self, response: Response) -> None:
        self._model_turns += 1
        self.history.append(
            AssistantTurn(
                content=response.text,
                tool_calls=response.tool_calls,
                reasoning=response.reasoning,
                usage=response.usage,
                response_id=response.id or None,
                timestamp=time.time(),
                message=response.message,
            )
        )
        self.hub.emit(
            "assistant_text_end",
            text=response.text,
            reasoning=response.reasoning,
            tool_calls=[{"id": c.id, "name": c.name} for c in response.tool_calls],
            usage=msgspec.to_builtins(response.usage),
        )

    def _drain_steering(self) -> None:
        while self.steering:
            text = self.steering.popleft()
            self.history.append(SteeringTurn(text, time.time()))
            self.hub.emit("steering_injected", content=text)

    def _watch_for_loops(self, calls: list[ToolCall]) -> None:
        config = self.config
        if not config.enable_loop_detection:
            return
        self._signatures.extend(call_signature(c.name, c.arguments) for c in calls)
        if detect_loop(self._signatures, config.loop_detection_window):
            warning = loop_warning(config.loop_detection_window)
            self.history.append(SteeringTurn(warning, time.time()))
            self.hub.emit("loop_detection", message=warning)
            self._signatures.clear()

    def _warn_about_context(self) -> bool:
        """Warn once the history nears the context window (~4 characters a token).

        The count is kept up to date incrementally: recounting the whole history on
        every round would make each round slower than the last."""
        self._history_chars += history_chars(self.history[self._chars_counted :])
        self._chars_counted = len(self.history)
        window = self.profile.context_window_size
        tokens = self._history_chars / 4
        if tokens <= window * self.config.context_warning_ratio:
            return False
        percent = round(tokens / window * 100)
        message = f"Context usage at ~{percent}% of context window"
        self.hub.emit("warning", kind="context_usage", message=message)
        return True

    # -- closing -------------------------------------------------------------

    def _refuse_if_closed(self) -> None:
        if self.state == "closed":
            raise SessionClosed(f"session {self.id} is closed")

    def _model_name(self) -> str:
        return self.config.model or self.profile.model

    async def _close(self, reason: str) -> None:
        """Cancel the work in progress, then end the session: SESSION_END, CLOSED."""
        if self.state == "closed":
            return
        if self._work is not None:
            self._work.cancel()
        await self._idle.wait()
        self.state = "closed"
        self.steering.clear()
        self.follow_ups.clear()
        if self.tools is not None:
            self.tools.close()
        self.hub.emit("session_end", reason=reason, state="closed", turns=len(self.history))
        self.hub.close()
