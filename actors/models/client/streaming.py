"""``stream()`` (unified-llm-spec §4.4): ``generate`` that yields events as they come.

``async with stream(model=..., prompt=...) as result: async for event in result``.
The steps run inside the iteration itself (a pull-driven async generator), so there
is no background task: a deadline or an abort cancels the pull that is waiting,
which closes the HTTP response at once. Between steps the stream runs the tools and
emits a :class:`StepFinish`. The steps are ``generate()``'s, on the same tool-round
engine (:mod:`actors.rounds`); only the model call differs: a stream whose events
pass through. Only the opening of each step's stream is retried; once
an event was delivered a failure is the stream's last event, as the spec asks.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import Any

import msgspec
import trio

from actors.models.client.client import Client, default_client
from actors.models.client.generate import (
    AbortController,
    GenerateResult,
    StepResult,
    StopCondition,
    TimeoutConfig,
    ToolSteps,
    continue_with,
    guarded,
    initial_messages,
    result_of,
    retry_policy_for,
)
from actors.models.client.tools import Tool
from actors.models.errors import ModelError, RequestTimeoutError, StreamError, from_info
from actors.models.retry import RetryPolicy
from actors.rounds import STOP, Answer, Stop, run_rounds
from protocol.llm import (
    Finish,
    FinishReason,
    Message,
    Part,
    ReasoningEnd,
    Request,
    Response,
    ResponseFormat,
    StreamEvent,
    StreamFailed,
    StreamStart,
    TextDelta,
    TextEnd,
    TextPart,
    ToolCallEnd,
    ToolChoice,
    ToolResult,
)


class StepFinish(msgspec.Struct, frozen=True, tag="step_finish", tag_field="type"):
    """Between two steps of a tool loop: the step that ended, its tool results included."""

    step: StepResult


HighLevelEvent = StreamEvent | StepFinish


class StreamAccumulator:
    """Collects stream events into the Response ``complete`` would have returned."""

    def __init__(self) -> None:
        self.id = ""
        self.model = ""
        self.parts: list[Part] = []
        self.open_text: dict[str, list[str]] = {}
        self.finished: Response | None = None
        self.error: ModelError | None = None

    def process(self, event: HighLevelEvent) -> None:
        kind = type(event)
        if kind is StreamStart:
            self.id, self.model = event.id, event.model  # type: ignore[union-attr]
            self.parts, self.open_text, self.finished = [], {}, None
        elif kind is TextDelta:
            self.open_text.setdefault(event.text_id, []).append(event.delta)  # type: ignore[union-attr]
        elif kind is ReasoningEnd:
            self.parts.append(event.part)  # type: ignore[union-attr]
        elif kind is ToolCallEnd:
            self.parts.append(event.call)  # type: ignore[union-attr]
        elif kind is Finish:
            self.finished = event.response  # type: ignore[union-attr]
        elif kind is StreamFailed:
            self.error = from_info(event.error)  # type: ignore[union-attr]
        elif kind is TextEnd:
            self.open_text.pop(event.text_id, None)  # type: ignore[union-attr]
            self.parts.append(TextPart(event.text))  # type: ignore[union-attr]

    def partial(self) -> Response:
        """What has arrived so far, as a Response (text still streaming included)."""
        if self.finished is not None:
            return self.finished
        parts = list(self.parts)
        parts += [TextPart("".join(chunks)) for chunks in self.open_text.values()]
        message = Message("assistant", parts)
        return Response(self.id, self.model, "", message, FinishReason("other"))

    def response(self) -> Response:
        if self.finished is not None:
            return self.finished
        if self.error is not None:
            raise self.error
        raise StreamError("the stream has not finished")


class _State:
    def __init__(self, limits: TimeoutConfig) -> None:
        self.accumulator = StreamAccumulator()
        self.limits = limits
        self.step_deadline = math.inf
        self.result: GenerateResult | None = None


class StreamResult:
    """Iterate it for events; afterwards ``response()`` and ``result`` hold the end."""

    def __init__(
        self,
        events: AsyncGenerator[HighLevelEvent, None],
        state: _State,
        abort: AbortController | None,
    ) -> None:
        self._events = events
        self._state = state
        self._abort = abort
        self._deadline = trio.current_time() + (state.limits.total or math.inf)

    def __aiter__(self) -> StreamResult:
        return self

    async def __anext__(self) -> HighLevelEvent:
        state = self._state
        per_step = state.limits.per_step
        limits = TimeoutConfig(total=self._deadline - trio.current_time())
        with guarded(limits, self._abort), trio.CancelScope(deadline=state.step_deadline) as step:
            event = await self._events.__anext__()
            state.accumulator.process(event)
            return event
        if step.cancelled_caught:
            raise RequestTimeoutError(f"a step took longer than {per_step} s")
        raise StopAsyncIteration  # pragma: no cover - guarded raises first

    @property
    async def text_stream(self) -> AsyncIterator[str]:
        """Only the text deltas (consumes the same iteration)."""
        async for event in self:
            if type(event) is TextDelta:
                yield event.delta

    def response(self) -> Response:
        return self._state.accumulator.response()

    @property
    def partial_response(self) -> Response | None:
        return self._state.accumulator.partial()

    @property
    def result(self) -> GenerateResult | None:
        """The whole operation's result (steps and total usage) once it has ended."""
        return self._state.result


async def _step_events(
    client: Client, request: Request, policy: RetryPolicy
) -> AsyncGenerator[StreamEvent, None]:
    """One step's events; a failure before the first event is retried by ``policy``."""
    attempt = 0
    while True:
        async with client.stream(request) as events:
            try:
                first = await events.__anext__()
            except StopAsyncIteration:
                return
            except ModelError as error:
                delay = policy.delay(attempt, error)
                if delay is None:
                    raise
            else:
                yield first
                async for event in events:
                    yield event
                return
        await trio.sleep(delay)
        attempt += 1


class StreamSteps(ToolSteps):
    """``generate()``'s steps with a streamed model call: its events pass through,
    each step has its own deadline (its tools included), and a
    :class:`StepFinish` goes out between steps."""

    def __init__(self, state: _State, *args: Any) -> None:
        super().__init__(*args)
        self.state = state

    def record(self, step: StepResult) -> None:
        super().record(step)
        self.state.result = result_of(self.steps)

    async def ask(self) -> AsyncGenerator[HighLevelEvent | Answer, None]:
        request = self.request()
        per_step = self.limits.per_step
        self.state.step_deadline = trio.current_time() + per_step if per_step else math.inf
        response: Response | None = None
        async with aclosing(_step_events(self.client, request, self.policy)) as events:
            async for event in events:
                yield event
                if type(event) is Finish:
                    response = event.response
                elif type(event) is StreamFailed:
                    return
        if response is not None:
            yield Answer(response)

    async def after_round(self, response: Response, results: list[ToolResult], rounds: int) -> Any:
        step = self.finished(response, results)
        if isinstance(step, Stop):
            return STOP
        self.state.step_deadline = math.inf
        continue_with(self.conversation, response, results)
        return StepFinish(step)


@asynccontextmanager
async def stream(
    model: str,
    prompt: str | None = None,
    *,
    messages: Sequence[Message] | None = None,
    system: str | None = None,
    tools: Sequence[Tool] = (),
    tool_choice: ToolChoice | None = None,
    max_tool_rounds: int = 1,
    stop_when: StopCondition | None = None,
    response_format: ResponseFormat | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    stop_sequences: Sequence[str] = (),
    reasoning_effort: str | None = None,
    provider: str | None = None,
    provider_options: dict[str, dict[str, Any]] | None = None,
    max_retries: int | None = None,
    retry_policy: RetryPolicy | None = None,
    timeout: float | TimeoutConfig | None = None,
    abort_signal: AbortController | None = None,
    client: Client | None = None,
) -> AsyncIterator[StreamResult]:
    """The same parameters as ``generate``; leaving the block closes the stream."""
    client = client or await default_client()
    conversation = initial_messages(prompt, messages, system)
    options = dict(
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        stop_sequences=list(stop_sequences),
        reasoning_effort=reasoning_effort,
        provider_options=provider_options or {},
        provider=provider,
    )
    policy = retry_policy_for(max_retries, retry_policy)
    limits = (
        TimeoutConfig(total=float(timeout))
        if isinstance(timeout, int | float)
        else timeout or TimeoutConfig()
    )
    state = _State(limits)
    host = StreamSteps(
        state, client, model, conversation, tools, tool_choice, response_format, options,
        max_tool_rounds, stop_when, policy, limits,
    )  # fmt: skip
    events: AsyncGenerator[HighLevelEvent, None] = run_rounds(host)
    async with aclosing(events):
        yield StreamResult(events, state, abort_signal)
