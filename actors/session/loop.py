"""The agentic loop of coding-agent-loop-spec §2.5: a plain object the session owns.

The session actor (:mod:`actors.session.actor`) creates one :class:`AgenticLoop`,
hands it what it works with (profile, settings, event hub, the subagents to close
when an input ends), connects the model, tools and environment snapshot when it
starts, and runs :meth:`AgenticLoop.run_inputs` as a task in its own nursery. The
loop never calls back into the actor: a fatal error is what ``run_inputs``
returns, and the actor closes itself.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import msgspec
import trio

from actors.kernel import Rejection
from actors.models.client.catalog import get_model_info, usage_cost
from actors.models.errors import (
    AccessDeniedError,
    AuthenticationError,
    ContextLengthError,
    ModelError,
)
from actors.models.fallback import FallbackModel
from actors.models.session import ModelSession
from actors.session.agentic_mode import KEEP_GOING, AgenticMode, with_state_block
from actors.session.events import EventHub
from actors.session.history import MessageLog, history_chars
from actors.session.loop_detection import call_signature, detect_loop, loop_warning
from actors.session.model_turn import ToolCallingMode, call_model
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot, build_system_prompt
from actors.session.resumed_round import ResumedRound
from actors.session.round_checks import ITERATION_LIMIT_MESSAGE, RoundChecks, Verdict
from actors.session.token_budget import TokenBudget
from actors.session.tool_round import ToolRunner
from actors.session.turns import TurnLog
from protocol.events import (
    AssistantTextEndEvent,
    CalledTool,
    ErrorEvent,
    InterruptedEvent,
    LoopDetectionEvent,
    LoopStateEvent,
    ProcessingEndEvent,
    SteeringInjectedEvent,
    TurnLimitEvent,
    UserInputEvent,
    WarningEvent,
)
from protocol.llm import Message, Request, Response, ToolCall, ToolChoice, ToolResult
from protocol.session import (
    AssistantTurn,
    CompletionStatus,
    LoopState,
    SessionConfig,
    SessionOutcome,
    SessionState,
    SteeringTurn,
    StopReason,
    ToolResultsTurn,
    UserTurn,
)

INTERRUPTED_RESULT = "Interrupted before the tool finished."


_ENDED_AS: dict[StopReason, LoopState] = {
    "completed": "completed",
    "error": "error",
    "interrupted": "interrupted",
    "turn_limit": "interrupted",
    "closed": "interrupted",
}
"""The loop state an input's stop reason leaves."""


LimitName = Literal[
    "max_tool_rounds_per_input",
    "max_turns",
    "agentic_max_iterations",
    "input_token_budget",
    "session_token_budget",
]
"""The settings an input can stop at, which ``extend_limit`` raises."""


class NothingToExtend(Rejection):
    """``ExtendLimit`` while the last input did not stop at a limit (or still runs)."""

    code = "invalid_request"


@dataclass(frozen=True)
class LoopParts:
    """What the loop needs once the session has started: the model, the tool
    runner in the session's environment, and the environment's snapshot."""

    model: ModelSession | FallbackModel
    tools: ToolRunner
    snapshot: EnvironmentSnapshot


class AgenticLoop:
    """Submit-to-idle processing: model calls, tool rounds, limits, steering.

    It owns the conversation (``history``), the queued steering and follow-ups, the
    settings and the loop's state; the session actor reads and changes them only
    from its own handlers (one task at a time)."""

    def __init__(
        self,
        profile: ProviderProfile,
        config: SessionConfig,
        hub: EventHub,
        history: TurnLog,
        agent_depth: int,
        close_subagents: Callable[[], Awaitable[None]],
    ) -> None:
        self.profile = profile
        self.config = config
        self.hub = hub
        self.history = history
        self.agent_depth = agent_depth
        self._close_subagents = close_subagents
        self.state: SessionState = "idle"
        self.steering: deque[str] = deque()
        self.follow_ups: deque[str] = deque()
        self.parts: LoopParts | None = None
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
        self.tool_calling = ToolCallingMode(config.tool_calling or profile.tool_calling)
        self._last_error: str | None = None
        self._interrupting = False
        self._stop_after_step = False
        self.resumed: ResumedRound | None = None
        """A round a crash cut short, finished before the next model call."""
        self._limit_hit: LimitName | None = None
        self._rounds = 0
        self.loop_state: LoopState | None = None
        self.agentic = AgenticMode(hub)
        self.budget = TokenBudget(self.history)
        self._completion: CompletionStatus | None = None

    @property
    def model_name(self) -> str:
        return self.config.model or self.profile.model

    def _parts(self) -> LoopParts:
        if self.parts is None:
            raise RuntimeError("the session has not started")
        return self.parts

    # -- what the session actor asks of the loop -----------------------------

    def begin(self) -> None:
        """Mark the session busy before the input's task starts (a WaitIdle sent
        right after the submit must wait for it)."""
        self.state = "processing"
        self._idle = trio.Event()

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def settle(self) -> None:
        """The input's task ended, whether or not it got as far as :meth:`run_inputs`
        (it can be cancelled before): the session is idle again, so nothing that
        waits for that (an interrupt, a close, WaitIdle) waits for ever."""
        if self._idle.is_set():
            return
        if self.state == "processing":
            self.state = "idle"
        self._idle.set()

    def cancel(self) -> None:
        """Cancel the work in progress (the model stream, running tools)."""
        if self._work is not None:
            self._work.cancel()

    async def interrupt(self, immediate: bool) -> None:
        """Stop the current input but keep the session: at once (the step in
        progress is cancelled), or after the current step."""
        if self.state != "processing":
            return
        if not immediate:
            self._stop_after_step = True
            return
        self._interrupting = True
        self.cancel()
        await self._idle.wait()

    def close(self) -> None:
        """The session is closed: nothing queued will run."""
        self.state = "closed"
        self.steering.clear()
        self.follow_ups.clear()

    def outcome(self) -> SessionOutcome:
        closed = self.state == "closed"
        completed = self._stop_reason == "completed" and not closed
        return SessionOutcome(
            state=self.state,
            output=self._last_text,
            success=completed and self._completion in (None, "success"),
            turns_used=self._model_turns,
            stop_reason="closed" if closed else self._stop_reason,
            error=self._last_error,
            completion_status=self._completion,
        )

    # -- inputs --------------------------------------------------------------

    def extend_limit(self, by: int) -> int:
        """Raise the limit the last input stopped at by ``by``; the tool rounds that
        input has used, to continue it with :meth:`run_inputs` (``text`` None)."""
        if by <= 0:
            raise NothingToExtend(f"extend_limit needs a positive amount, not {by}")
        if self.state != "idle" or self._limit_hit is None:
            raise NothingToExtend("the last input did not stop at an iteration limit")
        limit, self._limit_hit = self._limit_hit, None
        current = getattr(self.config, limit)
        self.config = msgspec.structs.replace(self.config, **{limit: current + by})
        return self._rounds

    async def run_inputs(self, text: str | None, rounds: int = 0) -> str | None:
        """Process ``text``, then each queued follow-up, until none is left.
        ``rounds`` continues an input stopped at its limit with the rounds it used.

        Returns why the session must close (an error no retry can fix), or None."""
        try:
            with trio.CancelScope() as scope:
                self._work = scope
                next_text: str | None = text
                while self._fatal is None:
                    await self._process_input(next_text, rounds)
                    rounds = 0
                    next_text = self._next_input()
                    if next_text is None and not self._continue_with_steering():
                        break
            if scope.cancelled_caught and self._interrupting:
                self._stop_reason = "interrupted"
                self.hub.emit(InterruptedEvent())
            await self._close_subagents()
        finally:
            self._work = None
            self._interrupting = False
            if self.state == "processing":
                self.state = "idle"
            if self._fatal is None and self.state != "closed":
                self._set_loop_state(_ENDED_AS[self._stop_reason])
                self.hub.emit(ProcessingEndEvent(self.state))
            self._idle.set()
        return self._fatal

    def _next_input(self) -> str | None:
        return self.follow_ups.popleft() if self.follow_ups else None

    def _continue_with_steering(self) -> bool:
        """A subagent's parent may steer it after its last round: rather than leave
        those messages for a submit that may never come, continue with them."""
        return self.agent_depth > 0 and bool(self.steering)

    async def _process_input(self, text: str | None, rounds: int = 0) -> None:
        """One input (None: continue with pending steering only) until it ends."""
        self.state = "processing"
        self._stop_reason, self._last_text, self._last_error = "completed", "", None
        self._limit_hit, self._completion = None, None
        if text is not None:
            self.agentic.leave()  # a new request; a continued one keeps its agentic loop
            self.budget.new_input()
            self.history.append(UserTurn(text, time.time()))
            self.hub.emit(UserInputEvent(text))
        self._drain_steering()
        resumed, self.resumed = self.resumed, None
        if resumed is not None:
            rounds = max(rounds, 1)
            await self._finish_round(resumed)
        context_warned = False
        checks = RoundChecks.for_input(self.config)
        while True:
            self._rounds = rounds
            if self._limit_reached(rounds):
                return
            if self._stop_after_step:
                self._stop_after_step = False
                self._stop_reason = "interrupted"
                self.hub.emit(InterruptedEvent())
                return
            self._set_loop_state("thinking")
            block = self.agentic.begin_iteration(self.config.agentic_max_iterations)
            response = await self._ask_model(block)
            if response is None:
                return
            self._record(response)
            budget_notes = self._spend(response)
            if not context_warned:
                context_warned = self._warn_about_context()
            calls = response.tool_calls
            if not calls:
                if self.agentic.active:  # no complete(): the agent means to go on
                    self.history.append(SteeringTurn(KEEP_GOING, time.time()))
                    self.hub.emit(SteeringInjectedEvent(KEEP_GOING))
                    continue
                if response.text.rstrip().endswith("?"):
                    self.state = "awaiting_input"
                return
            rounds += 1
            self._set_loop_state("executing_tool")
            results = await self._run_round(calls)
            self.history.append(ToolResultsTurn(results, time.time()))
            for note in budget_notes:
                self.history.append(SteeringTurn(note, time.time()))
            if self._completed(calls, results):
                return
            if self._stop_for(checks.after_round(rounds, calls, results)):
                return
            self._drain_steering()
            self._watch_for_loops(calls)

    def _set_loop_state(self, state: LoopState) -> None:
        if state != self.loop_state:
            self.loop_state = state
            self.hub.emit(LoopStateEvent(state))

    def _stop_for(self, verdict: Verdict) -> bool:
        """Apply the round's verdict: tell the model its notes, or end the input."""
        if verdict.stop_text is not None:
            self._last_text = verdict.stop_text
            if verdict.await_user:
                self.state = "awaiting_input"
            return True
        for message, category in verdict.notes:
            self.history.append(SteeringTurn(message, time.time()))
            self.hub.emit(WarningEvent(message, category))
        return False

    def _completed(self, calls: list[ToolCall], results: list[ToolResult]) -> bool:
        """Agentic mode follows the round; ``complete`` ends the input with its result."""
        tools = self._parts().tools
        completion = self.agentic.after_round(
            calls, results, tools.working_dir, tools.terminal.open,
            self.config.agentic_max_iterations,
        )  # fmt: skip
        if completion is None:
            return False
        self._last_text, self._completion = completion.result, completion.status
        return True

    def _spend(self, response: Response) -> list[str]:
        """Count the answer's tokens; warn the user now (the model hears it after
        the round, with the tool results)."""
        warnings = self.budget.record(response.usage, response.provider, self.config)
        for message in warnings:
            self.hub.emit(WarningEvent(message, "token_budget_near"))
        return warnings

    def _limit_reached(self, rounds: int) -> bool:
        config = self.config
        exceeded = self.budget.exceeded(config)
        if exceeded is not None:
            self._limit_hit = exceeded.name
            self.hub.emit(TurnLimitEvent(exceeded.name, tokens_used=exceeded.used))
            self._stop_reason, self._last_text = "turn_limit", exceeded.message
            return True
        if self.agentic.limit_reached(config.agentic_max_iterations):
            self._limit_hit = "agentic_max_iterations"
            self.hub.emit(TurnLimitEvent(self._limit_hit, round=self.agentic.iterations))
            self._stop_reason = "turn_limit"
            self._last_text = self.agentic.stop_at_limit(self._last_text)
            return True
        if config.max_tool_rounds_per_input and rounds >= config.max_tool_rounds_per_input:
            self._limit_hit = "max_tool_rounds_per_input"
            self.hub.emit(TurnLimitEvent(self._limit_hit, round=rounds))
        elif config.max_turns and self._model_turns >= config.max_turns:
            self._limit_hit = "max_turns"
            self.hub.emit(TurnLimitEvent(self._limit_hit, total_turns=self._model_turns))
        else:
            return False
        self._stop_reason = "turn_limit"
        self._last_text = ITERATION_LIMIT_MESSAGE
        return True

    async def _finish_round(self, resumed: ResumedRound) -> None:
        """The round a crash cut short (see :mod:`actors.session.resumed_round`)."""
        calls = resumed.to_run()
        try:
            ran = await self._parts().tools.run_round(calls, self.profile, self.config)
        except trio.Cancelled:
            cut = [ToolResult(c.id, INTERRUPTED_RESULT, True, c.name) for c in calls]
            self.history.append(ToolResultsTurn(resumed.merged(cut), time.time()))
            raise
        self.history.append(ToolResultsTurn(resumed.merged(ran), time.time()))
        self._drain_steering()

    async def _run_round(self, calls: list[ToolCall]) -> list[ToolResult]:
        try:
            return await self._parts().tools.run_round(calls, self.profile, self.config)
        except trio.Cancelled:
            # Every call must keep an answer, or the next request would carry tool
            # calls without results, which providers refuse.
            interrupted = [ToolResult(c.id, INTERRUPTED_RESULT, True, c.name) for c in calls]
            self.history.append(ToolResultsTurn(interrupted, time.time()))
            raise

    # -- the model -----------------------------------------------------------

    def _request(self, state_block: str | None = None) -> Request:
        """The next request; in agentic mode ``state_block`` goes just before the
        latest user prompt, in this request only."""
        config = self.config
        snapshot = self._parts().snapshot
        system = build_system_prompt(self.profile, snapshot, config.user_instructions)
        messages = self._messages.messages(self.history)
        if state_block is not None:
            messages = with_state_block(messages, self._messages.prompt_index(), state_block)
        return Request(
            model=self.model_name,
            messages=[Message.system(system), *messages],
            tools=self.profile.tools(),
            tool_choice=ToolChoice("auto"),
            reasoning_effort=config.reasoning_effort,
            provider_options=self.profile.provider_options(),
        )

    async def _ask_model(self, state_block: str | None = None) -> Response | None:
        """The model's answer, or None after reporting why there is none."""
        try:
            return await call_model(
                self._parts().model,
                self._request(state_block),
                self.hub,
                self.profile.supports_streaming,
                self.tool_calling,
            )
        except (AuthenticationError, AccessDeniedError) as error:
            self._report(error)
            self._fatal = f"{type(error).__name__}: {error}"
        except ContextLengthError as error:
            self._stop_reason, self._last_error = "error", str(error)
            self.hub.emit(WarningEvent(str(error), "context_length"))
        except ModelError as error:
            self._report(error)
        return None

    def _report(self, error: ModelError) -> None:
        self._stop_reason, self._last_error = "error", f"{type(error).__name__}: {error}"
        self.hub.emit(
            ErrorEvent(
                error_type=type(error).__name__,
                message=str(error),
                retryable=bool(getattr(error, "retryable", False)),
            )
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
            AssistantTextEndEvent(
                text=response.text,
                reasoning=response.reasoning,
                tool_calls=[CalledTool(c.id, c.name) for c in response.tool_calls],
                usage=response.usage,
                cost_usd=usage_cost(response.model, usage) or usage_cost(self.model_name, usage),
            )
        )

    # -- between rounds ------------------------------------------------------

    def _drain_steering(self) -> None:
        while self.steering:
            text = self.steering.popleft()
            self.history.append(SteeringTurn(text, time.time()))
            self.hub.emit(SteeringInjectedEvent(text))

    def _watch_for_loops(self, calls: list[ToolCall]) -> None:
        config = self.config
        if not config.enable_loop_detection:
            return
        self._signatures.extend(call_signature(c.name, c.arguments) for c in calls)
        if detect_loop(self._signatures, config.loop_detection_window):
            warning = loop_warning(config.loop_detection_window)
            self.history.append(SteeringTurn(warning, time.time()))
            self.hub.emit(LoopDetectionEvent(warning))
            self._signatures.clear()

    def _warn_about_context(self) -> bool:
        """Warn once the history nears the context window: the model catalog's window
        for the model in use (else the profile's), and the tokens the provider counted
        on its last answer (else ~4 characters a token).

        The character count is kept up to date incrementally: recounting the whole
        history on every round would make each round slower than the last."""
        self._history_chars += history_chars(self.history[self._chars_counted :])
        self._chars_counted = len(self.history)
        info = get_model_info(self.model_name)
        window = info.context_window if info is not None else self.profile.context_window_size
        tokens = self._context_tokens or self._history_chars / 4
        if tokens <= window * self.config.context_warning_ratio:
            return False
        percent = round(tokens / window * 100)
        message = f"Context usage at ~{percent}% of context window"
        self.hub.emit(WarningEvent(message, "context_usage"))
        return True
