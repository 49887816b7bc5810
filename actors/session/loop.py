"""The agentic loop of coding-agent-loop-spec §2.5, as the session actor's own task.

``AgenticLoop`` is mixed into :class:`~actors.session.actor.SessionActor`, which
owns the state it works on; keeping the loop here keeps each module to one job.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

import msgspec
import trio

from actors.models.client.catalog import get_model_info, usage_cost
from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    ContextLengthError,
    ModelError,
)
from actors.session.history import MessageLog, history_chars
from actors.session.loop_detection import call_signature, detect_loop, loop_warning
from actors.session.model_turn import call_model
from actors.session.prompt import build_system_prompt
from protocol.llm import Message, Request, Response, ToolCall, ToolChoice, ToolResult
from protocol.session import (
    AssistantTurn,
    SessionConfig,
    SessionState,
    SteeringTurn,
    StopReason,
    ToolResultsTurn,
    Turn,
    UserTurn,
)

if TYPE_CHECKING:
    from actors.models.session import ModelSession
    from actors.session.events import EventHub
    from actors.session.profiles import ProviderProfile
    from actors.session.prompt import EnvironmentSnapshot
    from actors.session.subagents import AgentManager
    from actors.session.tool_round import ToolRunner

INTERRUPTED_RESULT = "Interrupted before the tool finished."


class AgenticLoop:
    """Submit-to-idle processing: model calls, tool rounds, limits, steering."""

    # State owned by the session actor (declared for type checkers).
    config: SessionConfig
    profile: ProviderProfile
    hub: EventHub
    history: list[Turn]
    steering: deque[str]
    follow_ups: deque[str]
    state: SessionState
    model: ModelSession | None
    tools: ToolRunner | None
    snapshot: EnvironmentSnapshot | None
    agents: AgentManager
    agent_depth: int

    def _init_loop(self) -> None:
        self._work: trio.CancelScope | None = None
        self._idle = trio.Event()
        self._idle.set()
        self._signatures: list[str] = []
        self._fatal: str | None = None
        self._messages = MessageLog()
        self._model_turns = sum(1 for turn in self.history if isinstance(turn, AssistantTurn))
        self._history_chars = 0
        self._chars_counted = 0
        self._context_tokens: int | None = None
        self._stop_reason: StopReason = "completed"
        self._last_text = ""
        self._last_error: str | None = None
        self._interrupting = False
        self._stop_after_step = False

    def _model_name(self) -> str:
        return self.config.model or self.profile.model

    async def _close(self, reason: str) -> None:
        raise NotImplementedError

    # -- inputs --------------------------------------------------------------

    async def _run_inputs(self, text: str | None) -> None:
        """Process ``text``, then each queued follow-up, until none is left."""
        try:
            with trio.CancelScope() as scope:
                self._work = scope
                next_text: str | None = text
                while self._fatal is None:
                    await self._process_input(next_text)
                    next_text = self._next_input()
                    if next_text is None and not self._continue_with_steering():
                        break
            if scope.cancelled_caught and self._interrupting:
                self._stop_reason = "interrupted"
                self.hub.emit("interrupted")
            await self.agents.close_all()
        finally:
            self._work = None
            self._interrupting = False
            if self.state == "processing":
                self.state = "idle"
            if self._fatal is None and self.state != "closed":
                self.hub.emit("processing_end", state=self.state)
            self._idle.set()
        if self._fatal is not None:
            await self._close(self._fatal)

    def _next_input(self) -> str | None:
        return self.follow_ups.popleft() if self.follow_ups else None

    def _continue_with_steering(self) -> bool:
        """A subagent's parent may steer it after its last round: rather than leave
        those messages for a submit that may never come, continue with them."""
        return self.agent_depth > 0 and bool(self.steering)

    async def _process_input(self, text: str | None) -> None:
        """One input (None: continue with pending steering only) until it ends."""
        self.state = "processing"
        self._stop_reason, self._last_text, self._last_error = "completed", "", None
        if text is not None:
            self.history.append(UserTurn(text, time.time()))
            self.hub.emit("user_input", content=text)
        self._drain_steering()
        rounds = 0
        context_warned = False
        while True:
            if self._limit_reached(rounds):
                return
            if self._stop_after_step:
                self._stop_after_step = False
                self._stop_reason = "interrupted"
                self.hub.emit("interrupted")
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
            self.history.append(ToolResultsTurn(await self._run_round(calls), time.time()))
            self._drain_steering()
            self._watch_for_loops(calls)

    def _limit_reached(self, rounds: int) -> bool:
        config = self.config
        if config.max_tool_rounds_per_input and rounds >= config.max_tool_rounds_per_input:
            self.hub.emit("turn_limit", limit="max_tool_rounds_per_input", round=rounds)
        elif config.max_turns and self._model_turns >= config.max_turns:
            self.hub.emit("turn_limit", limit="max_turns", total_turns=self._model_turns)
        else:
            return False
        self._stop_reason = "turn_limit"
        return True

    async def _run_round(self, calls: list[ToolCall]) -> list[ToolResult]:
        assert self.tools is not None
        try:
            return await self.tools.run_round(calls, self.profile, self.config)
        except trio.Cancelled:
            # Every call must keep an answer, or the next request would carry tool
            # calls without results, which providers refuse.
            interrupted = [ToolResult(c.id, INTERRUPTED_RESULT, True, c.name) for c in calls]
            self.history.append(ToolResultsTurn(interrupted, time.time()))
            raise

    # -- the model -----------------------------------------------------------

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
            self._stop_reason, self._last_error = "error", str(error)
            self.hub.emit("warning", kind="context_length", message=str(error))
        except ModelError as error:
            self._report(error)
        return None

    def _report(self, error: ModelError) -> None:
        self._stop_reason, self._last_error = "error", f"{type(error).__name__}: {error}"
        self.hub.emit(
            "error",
            error_type=type(error).__name__,
            message=str(error),
            retryable=bool(getattr(error, "retryable", False)),
        )

    def _record(self, response: Response) -> None:
        self._model_turns += 1
        usage = response.usage
        cached = (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
        counted = usage.input_tokens + usage.output_tokens
        # Anthropic counts cached input apart from input_tokens; the others inside it.
        self._context_tokens = counted + (cached if response.provider == "anthropic" else 0)
        self._last_text = response.text
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
            cost_usd=usage_cost(response.model, usage) or usage_cost(self._model_name(), usage),
        )

    # -- between rounds ------------------------------------------------------

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
        """Warn once the history nears the context window: the model catalog's window
        for the model in use (else the profile's), and the tokens the provider counted
        on its last answer (else ~4 characters a token).

        The character count is kept up to date incrementally: recounting the whole
        history on every round would make each round slower than the last."""
        self._history_chars += history_chars(self.history[self._chars_counted :])
        self._chars_counted = len(self.history)
        info = get_model_info(self._model_name())
        window = info.context_window if info is not None else self.profile.context_window_size
        tokens = self._context_tokens or self._history_chars / 4
        if tokens <= window * self.config.context_warning_ratio:
            return False
        percent = round(tokens / window * 100)
        message = f"Context usage at ~{percent}% of context window"
        self.hub.emit("warning", kind="context_usage", message=message)
        return True
