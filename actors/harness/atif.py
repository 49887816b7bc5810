"""A stored session as an ATIF trajectory (Harbor's Agent Trajectory Interchange
Format, RFC 0001), the format Terminal-Bench's harness reads and shows.

Built from the session's durable events, not its history: the events keep every
tool call's arguments and full output, each model call's usage and cost, and
when each thing happened, even where the history was later compacted. One
agent step per model call (its text, reasoning, tool calls with arguments, and
the calls' results as its observation); user steps for inputs and steering;
system steps for model errors and limits. Subagents are embedded
(``subagent_trajectories``, ATIF v1.7) and referenced from the observation of
the ``spawn_agent`` call that started them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from actors.tools.core.agents import SPAWN_AGENT
from protocol.events import (
    AssistantTextEndEvent,
    ErrorEvent,
    InputInterruptedEvent,
    ModelFallbackEvent,
    SessionEvent,
    SessionStartEvent,
    SteeringInjectedEvent,
    SubagentSpawnedEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    TurnLimitEvent,
    UserInputEvent,
)

SCHEMA_VERSION = "ATIF-v1.7"
"""v1.7: the first with embedded subagent trajectories (``trajectory_id``)."""
AGENT_NAME = "troupe"
SPAWN_TOOL = SPAWN_AGENT.name


class ToolCall(msgspec.Struct, frozen=True, omit_defaults=True):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class SubagentRef(msgspec.Struct, frozen=True, omit_defaults=True):
    trajectory_id: str
    session_id: str | None = None


class ObservationResult(msgspec.Struct, omit_defaults=True):
    source_call_id: str | None = None
    content: str | None = None
    subagent_trajectory_ref: list[SubagentRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(msgspec.Struct, omit_defaults=True):
    results: list[ObservationResult]


class Metrics(msgspec.Struct, frozen=True, omit_defaults=True):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] | None = None


class Step(msgspec.Struct, omit_defaults=True):
    step_id: int
    source: str
    message: str
    timestamp: str | None = None
    model_name: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    llm_call_count: int | None = None
    extra: dict[str, Any] | None = None


class Agent(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(msgspec.Struct, frozen=True, omit_defaults=True):
    total_prompt_tokens: int
    total_completion_tokens: int
    total_steps: int
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None


class Trajectory(msgspec.Struct, omit_defaults=True):
    schema_version: str
    session_id: str
    trajectory_id: str
    agent: Agent
    steps: list[Step]
    final_metrics: FinalMetrics | None = None
    subagent_trajectories: list[Trajectory] | None = None
    extra: dict[str, Any] | None = None


def iso(timestamp: float) -> str:
    """ISO 8601 in UTC, as ATIF's timestamps are."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


EventsOf = Callable[[str], Sequence[SessionEvent]]
"""The stored events of a session (or subagent) by its id, oldest first."""


class _Builder:
    """Walks one session's events into steps."""

    def __init__(self, session_id: str, version: str) -> None:
        self.session_id = session_id
        self.version = version
        self.steps: list[Step] = []
        self.model = ""
        self.profile = ""
        self.working_directory = ""
        self.calls: dict[str, tuple[Step, int]] = {}
        """Each tool call's agent step and its index there, by call id."""
        self.open_spawns: list[tuple[str, str]] = []
        """spawn_agent calls not yet ended: (call id, task)."""
        self.subagents: list[str] = []

    def _step(self, source: str, message: str, at: float, **fields: Any) -> Step:
        step = Step(len(self.steps) + 1, source, message, iso(at), **fields)
        self.steps.append(step)
        return step

    def add(self, event: SessionEvent) -> None:
        data, at = event.data, event.timestamp
        match data:
            case SessionStartEvent():
                self.model, self.profile = data.model, data.profile
                self.working_directory = data.working_directory
            case ModelFallbackEvent():
                self.model = data.to_model
            case UserInputEvent():
                self._step("user", data.content, at)
            case SteeringInjectedEvent():
                self._step("user", data.content, at, extra={"troupe_kind": "steering"})
            case AssistantTextEndEvent():
                self._agent_step(data, at)
            case ToolCallStartEvent():
                self._tool_started(data, at)
            case ToolCallEndEvent():
                self._tool_ended(data)
            case SubagentSpawnedEvent():
                self._subagent(data)
            case ErrorEvent():
                self._step("system", f"{data.error_type}: {data.message}", at)
            case TurnLimitEvent():
                self._step("system", f"limit reached: {data.limit}", at)
            case InputInterruptedEvent():
                self._step("system", data.message, at)
            case _:
                pass

    def _agent_step(self, data: AssistantTextEndEvent, at: float) -> None:
        usage = data.usage
        extra = {
            name: value
            for name, value in (
                ("reasoning_tokens", usage.reasoning_tokens),
                ("cache_write_tokens", usage.cache_write_tokens),
            )
            if value is not None
        }
        metrics = Metrics(
            usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, data.cost_usd,
            extra or None,
        )  # fmt: skip
        calls = [ToolCall(call.id, call.name, {}) for call in data.tool_calls]
        step = self._step(
            "agent", data.text, at,
            model_name=self.model or None, reasoning_content=data.reasoning or None,
            tool_calls=calls or None, metrics=metrics, llm_call_count=1,
        )  # fmt: skip
        for index, call in enumerate(calls):
            self.calls[call.tool_call_id] = (step, index)

    def _tool_started(self, data: ToolCallStartEvent, at: float) -> None:
        found = self.calls.get(data.call_id)
        if found is None:  # a call the loop made itself (no model step announced it)
            step = self._step(
                "agent", "", at, tool_calls=[ToolCall(data.call_id, data.tool_name, {})],
                llm_call_count=0,
            )  # fmt: skip
            found = self.calls[data.call_id] = (step, 0)
        step, index = found
        assert step.tool_calls is not None
        step.tool_calls[index] = ToolCall(data.call_id, data.tool_name, dict(data.arguments))
        if data.tool_name == SPAWN_TOOL:
            self.open_spawns.append((data.call_id, str(data.arguments.get("task", ""))))

    def _result(self, call_id: str) -> ObservationResult | None:
        found = self.calls.get(call_id)
        if found is None:
            return None
        step = found[0]
        if step.observation is None:
            step.observation = Observation([])
        for result in step.observation.results:
            if result.source_call_id == call_id:
                return result
        result = ObservationResult(source_call_id=call_id)
        step.observation.results.append(result)
        return result

    def _tool_ended(self, data: ToolCallEndEvent) -> None:
        result = self._result(data.call_id)
        if result is not None:
            result.content = data.output
            if data.is_error:
                result.extra = {**(result.extra or {}), "is_error": True}
        self.open_spawns = [(c, t) for c, t in self.open_spawns if c != data.call_id]

    def _subagent(self, data: SubagentSpawnedEvent) -> None:
        """Referenced from the spawn_agent call that started it: the open one with
        its task, else the latest open one."""
        child = f"{self.session_id}.{data.agent_id}"
        self.subagents.append(child)
        matching = [c for c, task in self.open_spawns if task == data.task]
        candidates = matching or [c for c, _ in self.open_spawns]
        if not candidates:
            return
        result = self._result(candidates[-1])
        if result is not None:
            refs = result.subagent_trajectory_ref or []
            result.subagent_trajectory_ref = [*refs, SubagentRef(child, child)]

    def final_metrics(self) -> FinalMetrics:
        metrics = [step.metrics for step in self.steps if step.metrics is not None]
        cached = [m.cached_tokens for m in metrics if m.cached_tokens is not None]
        costs = [m.cost_usd for m in metrics]
        return FinalMetrics(
            total_prompt_tokens=sum(m.prompt_tokens or 0 for m in metrics),
            total_completion_tokens=sum(m.completion_tokens or 0 for m in metrics),
            total_steps=len(self.steps),
            total_cached_tokens=sum(cached) if cached else None,
            total_cost_usd=sum(c for c in costs if c is not None)
            if costs and all(c is not None for c in costs)
            else None,
        )


def trajectory(session_id: str, events_of: EventsOf, version: str, depth: int = 0) -> Trajectory:
    """The trajectory of ``session_id``, its subagents' embedded (to any depth)."""
    builder = _Builder(session_id, version)
    for event in events_of(session_id):
        builder.add(event)
    children = [
        trajectory(child, events_of, version, depth + 1)
        for child in dict.fromkeys(builder.subagents)
        if events_of(child)
    ]
    extra: dict[str, Any] = {"profile": builder.profile}
    if builder.working_directory:
        extra["working_directory"] = builder.working_directory
    return Trajectory(
        schema_version=SCHEMA_VERSION,
        session_id=session_id,
        trajectory_id=session_id,
        agent=Agent(AGENT_NAME, version, builder.model or None, extra),
        steps=builder.steps,
        final_metrics=builder.final_metrics(),
        subagent_trajectories=children or None,
        extra={"agent_depth": depth} if depth else None,
    )
