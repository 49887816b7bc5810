"""The agentic loop of coding-agent-loop-spec §2.5: a plain object the session owns.

The session actor (:mod:`actors.session.actor`) creates one :class:`AgenticLoop`,
hands it what it works with (profile, settings, event hub, the subagents to close
when an input ends), connects the model, tools and environment snapshot when it
starts, and runs :meth:`AgenticLoop.run_inputs` as a task in its own nursery. The
loop never calls back into the actor: a fatal error is what ``run_inputs``
returns, and the actor closes itself.

An input's rounds run on the tool-round engine (:mod:`actors.rounds`) that the
client layer's ``generate()`` and ``stream()`` run on too; the loop is the engine's
host: its model call, one call's run (``ToolRunner.execute``: policy, approvals,
hooks, events, the environment), and what happens before a call and between rounds.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing

import msgspec
import trio

from actors.hooks import SessionHooks
from actors.hooks.session import MAX_STOP_CONTINUATIONS, stop_answer_continues
from actors.models.errors import ModelError
from actors.models.fallback import FallbackModel
from actors.models.session import ModelSession
from actors.rounds import STOP, Answer, Move, Stop, run_round, run_rounds
from actors.session.agentic_mode import KEEP_GOING, AgenticMode
from actors.session.compaction import Compactor
from actors.session.cost_ledger import CostLedger
from actors.session.events import EventHub
from actors.session.input_limits import InputLimits, NothingToExtend
from actors.session.loop_detection import LoopWatch
from actors.session.model_calls import ModelCalls, ModelFailure
from actors.session.model_turn import ToolCallingMode
from actors.session.profiles import ProviderProfile
from actors.session.prompt import EnvironmentSnapshot
from actors.session.resumed_round import ResumedRound
from actors.session.rewind import RewindCancelled, SummaryFailed, input_index
from actors.session.round_checks import RoundChecks, Verdict
from actors.session.token_budget import TokenBudget
from actors.session.tool_round import ToolRunner
from actors.session.tree_snapshots import SnapshotReason, TreeSnapshots, mutating
from actors.session.turns import TurnLog
from actors.skills.commands import CommandCatalog
from protocol.events import (
    InterruptedEvent,
    LoopDetectionEvent,
    LoopStateEvent,
    ProcessingEndEvent,
    SteeringInjectedEvent,
    UserInputEvent,
    WarningEvent,
)
from protocol.llm import Response, ToolCall, ToolResult, Usage
from protocol.session import (
    CompactionOutcome,
    CompletionStatus,
    LoopState,
    RewindTurn,
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


__all__ = ["INTERRUPTED_RESULT", "AgenticLoop", "LoopParts", "NothingToExtend"]


class LoopParts(msgspec.Struct, frozen=True):
    """What the loop needs once the session has started: the model, the tool
    runner in the session's environment, and the environment's snapshot."""

    model: ModelSession | FallbackModel
    tools: ToolRunner
    snapshot: EnvironmentSnapshot
    tree: TreeSnapshots | None = None
    """Snapshots of the working tree (a top-level session's; None for subagents)."""


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
        background_agents: Callable[[], list[str]] = list,
        gather_background: Callable[[], Awaitable[list[str]]] | None = None,
    ) -> None:
        """``close_subagents`` runs when an input ends (the subagents that do not
        outlive it); ``background_agents`` names those still working then.
        ``gather_background`` waits for them and returns their results as
        follow-up texts: a subagent takes them in before its input ends, since its
        parent waits for that input's result."""
        self.profile = profile
        self.config = config
        self.hub = hub
        self.history = history
        self.agent_depth = agent_depth
        self._close_subagents = close_subagents
        self._background_agents = background_agents
        self._gather_background = gather_background
        self.state: SessionState = "idle"
        self.steering: deque[str] = deque()
        self.follow_ups: deque[str] = deque()
        self.parts: LoopParts | None = None
        self._work: trio.CancelScope | None = None
        self._idle = trio.Event()
        self._idle.set()
        self._loops = LoopWatch()
        self._fatal: str | None = None
        self.model = ModelCalls(profile, hub, history)
        self.cost = CostLedger(history.raw, ModelCalls.model_name(profile, config))
        self.compactor = Compactor(profile, hub, history, self.model.view, self.cost)
        self._stop_reason: StopReason = "completed"
        self._last_text = ""
        self.tool_calling = ToolCallingMode(config.tool_calling or profile.tool_calling)
        self._last_error: str | None = None
        self._interrupting = False
        self._stop_after_step = False
        self.resumed: ResumedRound | None = None
        """A round a crash cut short, finished before the next model call."""
        self.limits = InputLimits(hub)
        self._rounds = 0
        self.loop_state: LoopState | None = None
        self.durable: Callable[[], Awaitable[None]] | None = None
        """Awaited before each model request (a host with a store sets it): what the
        session has recorded so far is on disk, so a crash during the call loses no
        finished tool round, whose commands really ran (a resumed session would
        otherwise see them as interrupted, and may run them again)."""
        self.agentic = AgenticMode(hub)
        self.budget = TokenBudget(self.history.raw)
        self._completion: CompletionStatus | None = None
        self.hooks: SessionHooks | None = None
        self.prompt_commands: CommandCatalog | None = None
        """Custom slash commands (docs/skills.md): ``/name ...`` inputs expand to their
        prompt; None until they are found, at the first input."""
        """The session's hooks (docs/hooks.md), set when they are loaded."""
        self._stop_continuations = 0
        self._input_seq = 0
        """The sequence number of the current input's ``user_input`` event."""
        self._checks = RoundChecks.for_input(config)
        self._context_warned = False
        self._budget_notes: list[str] = []
        """The answer's budget warnings, told to the model after its round."""
        self._round_config = config
        """The settings the running round began with (a config update waits for the next)."""

    @property
    def model_name(self) -> str:
        return ModelCalls.model_name(self.profile, self.config)

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
            turns_used=self.model.turns,
            stop_reason="closed" if closed else self._stop_reason,
            error=self._last_error,
            completion_status=self._completion,
            spend=self.cost.total,
            subagent_spend=dict(self.cost.subagents),
        )

    # -- inputs --------------------------------------------------------------

    def extend_limit(self, by: int) -> int:
        """Raise the limit the last input stopped at by ``by``; the tool rounds that
        input has used, to continue it with :meth:`run_inputs` (``text`` None)."""
        self.config = self.limits.extend(self.config, by, self.state == "idle")
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
                        # A follow-up (a background result) may arrive while the
                        # subagents close: it is taken now, not left queued.
                        await self._close_subagents()
                        next_text = self._next_input()
                        if next_text is None and self._gather_background is not None:
                            self.follow_ups.extend(await self._gather_background())
                            next_text = self._next_input()
                        if next_text is None:
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
                self.hub.emit(ProcessingEndEvent(
                    self.state, background_agents=self._background_agents(),
                    spend=self.cost.total))  # fmt: skip
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
        self.limits.hit, self._completion = None, None
        self._stop_continuations = 0
        if text is not None:
            self.agentic.leave()  # a new request; a continued one keeps its agentic loop
            self.budget.new_input()
            self.cost.new_input()
            if self.prompt_commands is not None:
                text = self.prompt_commands.expand(text) or text
            if await self._prompt_blocked(text):
                return
            # seq: its user_input event's, emitted next (rewind and fork find it by that)
            self.history.append(UserTurn(text, time.time(), self.hub.last_seq + 1))
            self._input_seq = self.hub.emit(UserInputEvent(text)).seq
            await self._snapshot_tree("input")
        self._drain_hook_context()
        self._drain_steering()
        resumed, self.resumed = self.resumed, None
        if resumed is not None:
            rounds = max(rounds, 1)
            await self._finish_round(resumed)
        self._checks = RoundChecks.for_input(self.config)
        self._context_warned = False
        async with aclosing(run_rounds(self, rounds)) as items:
            async for _ in items:
                pass

    # -- the rounds: this loop's side of the tool-round engine (actors.rounds) ----

    @property
    def parallel(self) -> bool:
        return self.profile.supports_parallel_tool_calls

    def may_ask(self, rounds: int) -> bool:
        """Before each model call: the limits, and an interrupt asked for after the step."""
        self._rounds = rounds
        if self._limit_reached(rounds):
            return False
        if self._stop_after_step:
            self._stop_after_step = False
            self._stop_reason = "interrupted"
            self.hub.emit(InterruptedEvent())
            return False
        self._set_loop_state("thinking")
        return True

    async def ask(self) -> AsyncGenerator[Answer, None]:
        response = await self._ask_model()
        if response is not None:
            yield Answer(response)

    async def next_move(self, response: Response, rounds: int) -> Move:
        """Record the answer; without tool calls the input ends, unless agentic mode
        or a Stop hook makes the model go on."""
        self._last_text = response.text
        self.model.record(response, self.model_name)
        self.compactor.answered(response.usage, response.provider, self.history[-1])
        self._budget_notes = self._spend(response)
        if not self._context_warned:
            self._context_warned = self.model.warn_about_context(self.config)
        calls = response.tool_calls
        if not calls:
            if self.agentic.active:  # no complete(): the agent means to go on
                self.history.append(SteeringTurn(KEEP_GOING, time.time()))
                self.hub.emit(SteeringInjectedEvent(KEEP_GOING))
                return "ask_again"
            if await self._stop_hook_continues(response.text):
                return "ask_again"
            if response.text.rstrip().endswith("?"):
                self.state = "awaiting_input"
            return "stop"
        self._set_loop_state("executing_tool")
        if mutating(calls, self.profile.registry):
            await self._snapshot_tree("round")
        self._round_config = self.config  # the whole round runs with the settings it began with
        return "run_tools"

    async def run_call(self, call: ToolCall) -> ToolResult:
        return await self._parts().tools.execute(call, self.profile, self._round_config)

    def cut_short(self, calls: Sequence[ToolCall]) -> None:
        interrupted = [ToolResult(c.id, INTERRUPTED_RESULT, True, c.name) for c in calls]
        self.history.append(ToolResultsTurn(interrupted, time.time()))

    async def after_round(
        self, response: Response, results: list[ToolResult], rounds: int
    ) -> Stop | None:
        """The results into the history, then what ends the input or steers it."""
        calls = response.tool_calls
        self.history.append(ToolResultsTurn(results, time.time()))
        for note in self._budget_notes:
            self.history.append(SteeringTurn(note, time.time()))
        if self._completed(calls, results) or self._hook_stopped():
            return STOP
        self._drain_hook_context()
        if self._stop_for(self._checks.after_round(rounds, calls, results)):
            return STOP
        self._drain_steering()
        self._watch_for_loops(calls)
        return None

    # -- hooks (docs/hooks.md) ---------------------------------------------------

    async def _prompt_blocked(self, text: str) -> bool:
        """UserPromptSubmit: a hook that blocks drops the prompt (the user reads why)."""
        hooks = self.hooks or None
        if hooks is None:
            return False
        said = await hooks.user_prompt_submit(text)
        if not said.blocks and not said.stop:
            return False
        why = said.reason or said.stop_reason or "no reason given"
        self._last_text = f"Prompt blocked by a UserPromptSubmit hook: {why}"
        hooks.take_stop()
        self.hub.emit(WarningEvent(self._last_text, "hook"))
        return True

    async def _stop_hook_continues(self, text: str) -> bool:
        """Stop (SubagentStop): a hook that blocks makes the model go on with its reason."""
        hooks = self.hooks or None
        if hooks is None or self._stop_continuations >= MAX_STOP_CONTINUATIONS:
            return False
        said = await hooks.stop(self._stop_continuations > 0, text, self.agent_depth > 0)
        reason = stop_answer_continues(said)
        if reason is None:
            return False
        self._stop_continuations += 1
        self.history.append(SteeringTurn(reason, time.time()))
        self.hub.emit(SteeringInjectedEvent(reason))
        return True

    def _hook_stopped(self) -> bool:
        """A hook answered ``continue: false``: the input ends here."""
        reason = self.hooks.take_stop() if self.hooks is not None else None
        if reason is None:
            return False
        self._last_text = reason
        self.hub.emit(WarningEvent(reason, "hook"))
        return True

    def _drain_hook_context(self) -> None:
        """Context hooks gave (SessionStart, UserPromptSubmit) goes to the model."""
        if self.hooks is None:
            return
        for text in self.hooks.take_context():
            self.history.append(SteeringTurn(text, time.time()))
            self.hub.emit(SteeringInjectedEvent(text))

    def waiting_for_approval(self, waiting: bool) -> None:
        """The session waits for an approval answer (coding-agent-loop-spec's
        WAITING_APPROVAL), or no longer does: back to running the round's tools."""
        if waiting:
            self._set_loop_state("waiting_approval")
        elif self.loop_state == "waiting_approval":
            self._set_loop_state("executing_tool")

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
            self.config.agentic_max_iterations, self.profile.registry,
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
        self.cost.record(response.usage, response.model, self.model_name)
        for message in self.cost.warnings(self.config):
            self.hub.emit(WarningEvent(message, "cost_cap_near"))
            warnings.append(message)
        return warnings

    def _limit_reached(self, rounds: int) -> bool:
        stop_text = self.limits.check(
            self.config, rounds, self.model.turns, self.agentic, self.budget, self._last_text,
            self.cost,
        )  # fmt: skip
        if stop_text is None:
            return False
        self._stop_reason, self._last_text = "turn_limit", stop_text
        return True

    async def _finish_round(self, resumed: ResumedRound) -> None:
        """The round a crash cut short (see :mod:`actors.session.resumed_round`)."""
        calls = resumed.to_run()
        if mutating(calls, self.profile.registry):
            await self._snapshot_tree("round")
        self._round_config = self.config

        def cut_short(calls: Sequence[ToolCall]) -> None:
            cut = [ToolResult(c.id, INTERRUPTED_RESULT, True, c.name) for c in calls]
            self.history.append(ToolResultsTurn(resumed.merged(cut), time.time()))

        ran = await run_round(calls, self.run_call, self.parallel, cut_short)
        self.history.append(ToolResultsTurn(resumed.merged(ran), time.time()))
        self._drain_steering()

    async def _snapshot_tree(self, reason: SnapshotReason) -> None:
        """Record the working tree (docs/snapshots.md); never fails the input."""
        tree = self._parts().tree
        if tree is not None:
            await tree.take(reason, self._input_seq, self.config)

    # -- the model -----------------------------------------------------------

    async def _ask_model(self) -> Response | None:
        """The model's answer (in agentic mode, with this iteration's state block),
        or None once the input has been ended by the failure."""
        if self.durable is not None:
            await self.durable()
        parts = self._parts()
        await self.compactor.before_request(parts.model, self.config, self.model_name)
        block = self.agentic.begin_iteration(self.config.agentic_max_iterations)
        request = self.model.request(self.config, parts.snapshot, block, self._identity())
        self.compactor.sent(request)
        answer = await self.model.ask(parts.model, request, self.tool_calling)
        if isinstance(answer, ModelFailure) and answer.context_length:
            answer = await self._compact_and_retry(block) or answer
        if not isinstance(answer, ModelFailure):
            return answer
        self._stop_reason, self._last_error = "error", answer.error
        if answer.fatal:
            self._fatal = answer.error
        return None

    def _identity(self) -> str | None:
        """The model the system prompt names: a fallback route's own model once the
        session has moved to it (None: the session's model)."""
        model = self._parts().model
        return model.route_model if isinstance(model, FallbackModel) else None

    async def _compact_and_retry(self, block: str | None) -> Response | ModelFailure | None:
        """The provider said the request was too long: compact once and send it
        again (``auto`` only); None when there was nothing to compact."""
        if self.config.compaction != "auto":
            return None
        parts = self._parts()
        outcome = await self.compactor.compact(
            parts.model, self.config, self.model_name, "overflow"
        )
        if outcome.kind == "none":
            return None
        request = self.model.request(self.config, parts.snapshot, block, self._identity())
        self.compactor.sent(request)
        return await self.model.ask(parts.model, request, self.tool_calling)

    async def compact(self, instructions: str | None) -> CompactionOutcome:
        """A compaction asked for (``compact``, ``/compact``), between inputs."""
        parts = self._parts()
        with trio.CancelScope() as scope:
            self._work = scope
            try:
                return await self.compactor.compact(
                    parts.model, self.config, self.model_name, "manual", instructions
                )
            finally:
                self._work = None
        return CompactionOutcome("none", 0, 0, "cancelled")

    async def summarize_cut(self, to_seq: int, instructions: str | None) -> tuple[str, Usage]:
        """The model's summary of what a rewind to the input of event ``to_seq``
        cuts ("summarize from here"), with the compaction prompt. Nothing changes
        yet: a failure leaves the session as it was."""
        index = input_index(self.history, to_seq)
        parts = self._parts()
        summary: tuple[str, Usage] | None = None
        with trio.CancelScope() as scope:
            self._work = scope
            try:
                summary = await self.compactor.summarize(
                    parts.model, self.config, self.model_name, index, len(self.history),
                    instructions,
                )  # fmt: skip
            except ModelError as error:
                raise SummaryFailed(f"the summary could not be written: {error}") from None
            finally:
                self._work = None
        if summary is None:
            raise RewindCancelled("the rewind was cancelled while the summary was written")
        return summary

    def cut(self, to_seq: int, summary: str | None, usage: Usage | None) -> tuple[int, int]:
        """Cut the conversation just before the input of event ``to_seq`` (a durable
        :class:`RewindTurn`; ``summary`` stands for the cut part). Returns the turns
        before and after. Between inputs only."""
        index = input_index(self.history, to_seq)
        before = len(self.history)
        self.history.append(RewindTurn(index, to_seq, time.time(), summary, usage))
        self._loops = LoopWatch()
        return before, len(self.history)

    # -- between rounds ------------------------------------------------------

    def _drain_steering(self) -> None:
        while self.steering:
            text = self.steering.popleft()
            self.history.append(SteeringTurn(text, time.time()))
            self.hub.emit(SteeringInjectedEvent(text))

    def _watch_for_loops(self, calls: list[ToolCall]) -> None:
        warning = self._loops.warning_after(calls, self.config)
        if warning is not None:
            self.history.append(SteeringTurn(warning, time.time()))
            self.hub.emit(LoopDetectionEvent(warning))
