"""``generate()`` (unified-llm-spec §4.3): prompt standardisation, the tool loop with
``StepResult``s, retries per step, timeouts and cancellation, all on trio.

The rounds run on the one tool-round engine (:mod:`actors.rounds`) that the session
uses too: :class:`ToolSteps` is this layer's side of it (requests from the
conversation, the user's tools run by their handlers, a step per model call);
``stream()`` differs only in its model call.

Cancellation is trio's own: an :class:`AbortController` cancels the scope the call
runs in and the call raises :class:`~actors.models.errors.AbortError`; a
``TimeoutConfig`` bounds the whole operation (``total``) and each model call
(``per_step``) and raises :class:`~actors.models.errors.RequestTimeoutError`.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from contextlib import ExitStack, aclosing, contextmanager
from typing import Any

import msgspec
import trio

from actors.models.client.client import Client, default_client
from actors.models.client.middleware import retry
from actors.models.client.tools import Tool, run_tool
from actors.models.errors import AbortError, ConfigurationError, RequestTimeoutError
from actors.models.retry import RetryPolicy
from actors.rounds import STOP, Answer, Move, Stop, run_rounds
from protocol.llm import (
    FinishReason,
    Message,
    Request,
    Response,
    ResponseFormat,
    ToolCall,
    ToolChoice,
    ToolResult,
    Usage,
)


class TimeoutConfig(msgspec.Struct, frozen=True):
    total: float | None = None
    per_step: float | None = None


class AbortController:
    """``controller.abort()`` cancels every operation given it (from any task of the
    same trio run; from another thread, through ``trio.from_thread.run_sync``)."""

    def __init__(self) -> None:
        self.aborted = False
        self._scopes: set[trio.CancelScope] = set()

    @property
    def signal(self) -> AbortController:
        """The spec's ``controller.signal``: the controller itself is the signal."""
        return self

    def abort(self) -> None:
        self.aborted = True
        for scope in list(self._scopes):
            scope.cancel()

    @contextmanager
    def watch(self) -> Iterator[trio.CancelScope]:
        with trio.CancelScope() as scope:
            if self.aborted:
                scope.cancel()
            self._scopes.add(scope)
            try:
                yield scope
            finally:
                self._scopes.discard(scope)


class StepResult(msgspec.Struct, frozen=True):
    text: str
    reasoning: str | None
    tool_calls: list[ToolCall]
    tool_results: list[ToolResult]
    finish_reason: FinishReason
    usage: Usage
    response: Response
    warnings: list[str] = []


class GenerateResult(msgspec.Struct, frozen=True):
    text: str
    reasoning: str | None
    tool_calls: list[ToolCall]
    tool_results: list[ToolResult]
    finish_reason: FinishReason
    usage: Usage
    total_usage: Usage
    steps: list[StepResult]
    response: Response
    output: Any = None


StopCondition = Callable[[list[StepResult]], bool]


def initial_messages(
    prompt: str | None, messages: Sequence[Message] | None, system: str | None
) -> list[Message]:
    """Either a prompt or messages, never both; the system text goes first."""
    if prompt is not None and messages is not None:
        raise ConfigurationError("generate: give a prompt or messages, not both")
    if prompt is None and messages is None:
        raise ConfigurationError("generate: give a prompt or messages")
    out = [Message.user(prompt)] if prompt is not None else list(messages or ())
    if system is not None:
        out.insert(0, Message.system(system))
    return out


def step_result(response: Response, results: list[ToolResult]) -> StepResult:
    return StepResult(
        response.text,
        response.reasoning,
        response.tool_calls,
        results,
        response.finish_reason,
        response.usage,
        response,
    )


def result_of(steps: list[StepResult], output: Any = None) -> GenerateResult:
    last = steps[-1]
    total = Usage()
    for step in steps:
        total = total + step.usage
    return GenerateResult(
        last.text,
        last.reasoning,
        last.tool_calls,
        last.tool_results,
        last.finish_reason,
        last.usage,
        total,
        steps,
        last.response,
        output,
    )


def wants_tools(response: Response, tools: Sequence[Tool]) -> bool:
    """The model called tools and each is ours to run: a call of a passive tool (no
    ``execute``) goes back to the caller instead; an unknown one gets an error result."""
    if not response.tool_calls or response.finish_reason.reason != "tool_calls":
        return False
    passive = {tool.name for tool in tools if tool.execute is None}
    return not any(call.name in passive for call in response.tool_calls)


def continue_with(
    conversation: list[Message], response: Response, results: list[ToolResult]
) -> None:
    conversation.append(response.message)
    for result in results:
        conversation.append(
            Message.tool_result(
                result.tool_call_id, result.content, is_error=result.is_error, name=result.name
            )
        )


def retry_policy_for(max_retries: int | None, policy: RetryPolicy | None) -> RetryPolicy:
    """``max_retries`` wins when given; else the policy's own count; else the spec's 2."""
    policy = policy or RetryPolicy()
    if max_retries is not None:
        policy = msgspec.structs.replace(policy, max_retries=max_retries)
    return policy


def _timeouts(timeout: float | TimeoutConfig | None) -> TimeoutConfig:
    if isinstance(timeout, int | float):
        return TimeoutConfig(total=float(timeout))
    return timeout or TimeoutConfig()


@contextmanager
def guarded(timeout: TimeoutConfig, abort: AbortController | None) -> Iterator[None]:
    """The operation's scope: its total deadline, and cancellation by the abort signal."""
    total = timeout.total if timeout.total is not None else math.inf
    with ExitStack() as stack:
        aborted = stack.enter_context(abort.watch()) if abort is not None else None
        with trio.move_on_after(total) as deadline:
            yield
    if aborted is not None and aborted.cancelled_caught:
        raise AbortError("the operation was aborted")
    if deadline.cancelled_caught:
        raise RequestTimeoutError(f"the operation took longer than {timeout.total} s")


def build_request(
    model: str,
    conversation: list[Message],
    tools: Sequence[Tool],
    tool_choice: ToolChoice | None,
    response_format: ResponseFormat | None,
    options: dict[str, Any],
) -> Request:
    return Request(
        model=model,
        messages=list(conversation),
        tools=[tool.definition() for tool in tools],
        tool_choice=tool_choice if tool_choice is not None or not tools else ToolChoice("auto"),
        response_format=response_format,
        **options,
    )


async def generate(
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
) -> GenerateResult:
    """Ask the model, run the tools it calls, and ask again, up to ``max_tool_rounds``.

    Each model call is retried on its own (``max_retries``; ``retry_policy`` for
    delays), so a retry in step 3 never repeats steps 1 and 2."""
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
    limits = _timeouts(timeout)
    host = ToolSteps(
        client, model, conversation, tools, tool_choice, response_format, options,
        max_tool_rounds, stop_when, policy, limits,
    )  # fmt: skip
    with guarded(limits, abort_signal):
        async with aclosing(run_rounds(host)) as rounds:
            async for _ in rounds:
                pass
    return result_of(host.steps)


class ToolSteps:
    """The client layer's side of the tool-round engine: each request built from the
    conversation, the user's active tools run by their handlers (all of a round at
    once), a :class:`StepResult` per model call, ``max_tool_rounds`` and
    ``stop_when`` applied. Its model call is ``complete`` with retries per step."""

    parallel = True

    def __init__(
        self,
        client: Client,
        model: str,
        conversation: list[Message],
        tools: Sequence[Tool],
        tool_choice: ToolChoice | None,
        response_format: ResponseFormat | None,
        options: dict[str, Any],
        max_tool_rounds: int,
        stop_when: StopCondition | None,
        policy: RetryPolicy,
        limits: TimeoutConfig,
    ) -> None:
        self.client = client
        self.model = model
        self.conversation = conversation
        self.tools = tools
        self.tool_choice = tool_choice
        self.response_format = response_format
        self.options = options
        self.max_tool_rounds = max_tool_rounds
        self.stop_when = stop_when
        self.policy = policy
        self.limits = limits
        self.steps: list[StepResult] = []
        self._by_name = {tool.name: tool for tool in tools}
        self._context: dict[str, Any] = {"messages": conversation, "abort_signal": None}

    def request(self) -> Request:
        return build_request(
            self.model, self.conversation, self.tools, self.tool_choice,
            self.response_format, self.options,
        )  # fmt: skip

    def record(self, step: StepResult) -> None:
        self.steps.append(step)

    def may_ask(self, rounds: int) -> bool:
        return True  # the rounds stop at the answer that would pass the limit

    async def ask(self) -> AsyncGenerator[Any, None]:
        yield Answer(await _step(self.client, self.request(), self.policy, self.limits.per_step))

    async def next_move(self, response: Response, rounds: int) -> Move:
        if wants_tools(response, self.tools) and rounds < self.max_tool_rounds:
            return "run_tools"
        self.record(step_result(response, []))
        return "stop"

    async def run_call(self, call: ToolCall) -> ToolResult:
        return await run_tool(self._by_name.get(call.name), call, self._context)

    def cut_short(self, calls: Sequence[ToolCall]) -> None:
        """Cancelled mid-round: the whole operation ends, nothing to record."""

    async def after_round(self, response: Response, results: list[ToolResult], rounds: int) -> Any:
        step = self.finished(response, results)
        if isinstance(step, Stop):
            return STOP
        continue_with(self.conversation, response, results)
        return None

    def finished(self, response: Response, results: list[ToolResult]) -> StepResult | Stop:
        """Record the round's step; :data:`STOP` when ``stop_when`` says so."""
        step = step_result(response, results)
        self.record(step)
        if self.stop_when is not None and self.stop_when(self.steps):
            return STOP
        return step


async def _step(
    client: Client, request: Request, policy: RetryPolicy, per_step: float | None
) -> Response:
    async def once() -> Response:
        if per_step is None:
            return await client.complete(request)
        with trio.move_on_after(per_step) as scope:
            return await client.complete(request)
        assert scope.cancelled_caught
        raise RequestTimeoutError(f"{request.model}: no answer within {per_step} s (per step)")

    return await retry(once, policy)
