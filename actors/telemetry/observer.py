"""Sessions' event streams as OpenTelemetry spans and metrics.

Telemetry is an observer, not code in the loop: the host hands each session's
event hub (subagents' too) to :meth:`Telemetry.observe`, and everything below
is derived from the events the session publishes anyway. Spans carry the
events' own times, so what a collector shows is when things happened.

The tree of one session::

    troupe.session                      (a subagent's: a child of its parent's input)
      troupe.input                      (one per input: user_input .. processing_end)
        chat MODEL                      (one per model call, with tokens and cost)
        execute_tool TOOL               (one per tool call; commands are tool calls)
          troupe.approval               (while a client is asked)

Prompt, answer and tool text are attributes only with ``capture_content``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import Meter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from actors.session.events import EventHub
from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantTextEndEvent,
    AssistantTextStartEvent,
    ErrorEvent,
    LoopStateEvent,
    ModelFallbackEvent,
    PolicyDecisionEvent,
    ProcessingEndEvent,
    SessionEndEvent,
    SessionEvent,
    SessionStartEvent,
    SubagentSpawnedEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    TurnLimitEvent,
    UserInputEvent,
)

log = logging.getLogger("troupe.telemetry")

CONTENT_LIMIT = 8192
"""Characters of one text attribute (a tool's output can be megabytes)."""


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _text(value: str) -> str:
    return value if len(value) <= CONTENT_LIMIT else value[:CONTENT_LIMIT] + "…"


@dataclass
class _Session:
    """The open spans of one session."""

    span: Span
    model: str
    depth: int
    input: Span | None = None
    outcome: str | None = None
    model_call: Span | None = None
    model_started: float = 0.0
    tools: dict[str, Span] = field(default_factory=dict)
    approvals: dict[str, tuple[Span, float]] = field(default_factory=dict)

    def open_spans(self) -> list[Span]:
        spans = [span for span, _ in self.approvals.values()]
        spans += list(self.tools.values())
        spans += [s for s in (self.model_call, self.input) if s is not None]
        return spans


class Instruments:
    """The metrics Troupe records (names follow Claude Code's and Codex's
    ``<tool>.token.usage`` style; attributes follow the GenAI conventions)."""

    def __init__(self, meter: Meter) -> None:
        self.sessions = meter.create_counter(
            "troupe.session.count", "{session}", "Sessions (and subagents) started"
        )
        self.tokens = meter.create_counter(
            "troupe.token.usage", "{token}", "Tokens by kind: input, output, cache_read, "
            "cache_write, reasoning"
        )  # fmt: skip
        self.cost = meter.create_counter(
            "troupe.cost.usage", "USD", "Cost of model calls at list prices"
        )
        self.model_calls = meter.create_histogram(
            "troupe.model_call.duration", "s", "Model calls, from request to whole answer"
        )
        self.tool_calls = meter.create_counter(
            "troupe.tool_call.count", "{call}", "Tool calls by tool and outcome"
        )
        self.errors = meter.create_counter(
            "troupe.error.count", "{error}", "Model call failures by error type"
        )
        self.approval_wait = meter.create_histogram(
            "troupe.approval.wait", "s", "Time a tool call waited for an approval"
        )


class Telemetry:
    """Turns the events of every observed session into spans and metrics."""

    def __init__(self, tracer: Tracer | None, meter: Meter | None, capture_content: bool) -> None:
        self.tracer = tracer or trace.NoOpTracer()
        self.instruments = Instruments(meter) if meter is not None else None
        self.capture_content = capture_content
        self.sessions: dict[str, _Session] = {}

    # -- wiring ----------------------------------------------------------------

    def observe(self, hub: EventHub) -> None:
        """Follow ``hub``'s session (a host calls this before the session starts)."""
        hub.add_sink(self._sink)

    def _sink(self, event: SessionEvent) -> None:
        """A hub sink must not raise: a telemetry fault never reaches the session."""
        try:
            self.handle(event)
        except Exception as error:  # one line, never a traceback at the user's terminal
            log.warning("telemetry could not record %s of %s: %r", event.kind, event.session_id,
                        error)  # fmt: skip

    def close(self, now: float) -> None:
        """End what is still open (a host stopping suspends its sessions without a
        ``session_end``): the spans are marked suspended, not lost."""
        for session in list(self.sessions.values()):
            for span in [*session.open_spans(), session.span]:
                span.set_attribute("troupe.suspended", True)
                span.end(_ns(now))
        self.sessions.clear()

    # -- events ----------------------------------------------------------------

    def handle(self, event: SessionEvent) -> None:
        data = event.data
        sid = event.session_id
        if isinstance(data, SessionStartEvent):
            self._start_session(sid, data, event.timestamp)
            return
        session = self.sessions.get(sid)
        if session is None:
            return
        at = event.timestamp
        match data:
            case UserInputEvent():
                self._end_input(session, at)
                session.input = self._child(session.span, "troupe.input", at, SpanKind.INTERNAL)
                session.outcome = None
                if self.capture_content:
                    session.input.set_attribute("troupe.input.text", _text(data.content))
            case LoopStateEvent(state="thinking") | AssistantTextStartEvent():
                self._start_model_call(session, at)
            case LoopStateEvent(state=state) if state in ("completed", "error", "interrupted"):
                session.outcome = state
            case AssistantTextEndEvent():
                self._end_model_call(session, data, at)
            case ErrorEvent():
                self._model_error(session, data, at)
            case ModelFallbackEvent():
                session.model = data.to_model
            case ToolCallStartEvent():
                self._start_tool(session, data, at)
            case ToolCallEndEvent():
                self._end_tool(session, data, at)
            case PolicyDecisionEvent():
                span = session.tools.get(data.call_id)
                if span is not None:
                    span.set_attributes({
                        "troupe.policy.category": data.category,
                        "troupe.policy.action": data.action,
                        "troupe.policy.decided_by": data.decided_by,
                    })  # fmt: skip
            case ApprovalRequestEvent():
                self._start_approval(session, data, at)
            case ApprovalResolvedEvent():
                self._end_approval(session, data, at)
            case TurnLimitEvent():
                if session.input is not None:
                    session.input.set_attribute("troupe.limit", data.limit)
            case SubagentSpawnedEvent():
                if session.input is not None:
                    session.input.add_event(
                        "subagent_spawned", {"troupe.agent.id": data.agent_id}, _ns(at)
                    )
            case ProcessingEndEvent():
                self._end_input(session, at, data.interrupted)
            case SessionEndEvent():
                self._end_session(sid, session, data, at)
            case _:
                pass

    # -- spans -----------------------------------------------------------------

    def _child(
        self,
        parent: Span,
        name: str,
        at: float,
        kind: SpanKind,
        attributes: Mapping[str, Any] | None = None,
    ) -> Span:
        return self.tracer.start_span(
            name,
            context=trace.set_span_in_context(parent),
            kind=kind,
            attributes=attributes,
            start_time=_ns(at),
        )

    def _start_session(self, sid: str, data: SessionStartEvent, at: float) -> None:
        previous = self.sessions.pop(sid, None)
        if previous is not None:  # started again in place: close the old tree first
            for span in [*previous.open_spans(), previous.span]:
                span.end(_ns(at))
        attributes: dict[str, Any] = {
            "session.id": sid,
            "troupe.profile": data.profile,
            "gen_ai.request.model": data.model,
            "troupe.agent.depth": data.agent_depth,
        }
        parent = None
        if data.agent_depth > 0 and "." in sid:
            parent_id, agent_id = sid.rsplit(".", 1)
            attributes["troupe.agent.id"] = agent_id
            attributes["troupe.parent.session.id"] = parent_id
            owner = self.sessions.get(parent_id)
            if owner is not None:
                parent = owner.input or owner.span
        name = "troupe.subagent" if data.agent_depth > 0 else "troupe.session"
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name, context=context, attributes=attributes, start_time=_ns(at)
        )
        self.sessions[sid] = _Session(span, data.model, data.agent_depth)
        if self.instruments is not None:
            self.instruments.sessions.add(1, {"troupe.subagent": data.agent_depth > 0})

    def _end_session(self, sid: str, session: _Session, data: SessionEndEvent, at: float) -> None:
        for span in session.open_spans():
            span.end(_ns(at))
        session.span.set_attributes({"troupe.end.reason": data.reason, "troupe.turns": data.turns})
        session.span.end(_ns(at))
        self.sessions.pop(sid, None)

    def _end_input(self, session: _Session, at: float, interrupted: bool = False) -> None:
        span = session.input
        if span is None:
            return
        if session.model_call is not None:
            session.model_call.end(_ns(at))
            session.model_call = None
        for tool in session.tools.values():
            tool.end(_ns(at))
        session.tools.clear()
        outcome = "interrupted" if interrupted else session.outcome
        if outcome is not None:
            span.set_attribute("troupe.input.outcome", outcome)
        if outcome == "error":
            span.set_status(Status(StatusCode.ERROR))
        span.end(_ns(at))
        session.input = None

    def _start_model_call(self, session: _Session, at: float) -> None:
        if session.model_call is not None or session.input is None:
            return
        session.model_call = self._child(
            session.input,
            f"chat {session.model}",
            at,
            SpanKind.CLIENT,
            {"gen_ai.operation.name": "chat", "gen_ai.request.model": session.model},
        )
        session.model_started = at

    def _end_model_call(self, session: _Session, data: AssistantTextEndEvent, at: float) -> None:
        if session.model_call is None:
            self._start_model_call(session, at)
        span = session.model_call
        if span is None:
            return
        usage = data.usage
        kinds = {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "cache_read": usage.cache_read_tokens,
            "cache_write": usage.cache_write_tokens,
            "reasoning": usage.reasoning_tokens,
        }
        attributes: dict[str, Any] = {
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "troupe.tool_calls": len(data.tool_calls),
        }
        for kind in ("cache_read", "cache_write", "reasoning"):
            if kinds[kind] is not None:
                attributes[f"troupe.usage.{kind}_tokens"] = kinds[kind]
        if data.cost_usd is not None:
            attributes["troupe.cost_usd"] = data.cost_usd
        if self.capture_content:
            attributes["troupe.output.text"] = _text(data.text)
            if data.reasoning:
                attributes["troupe.output.reasoning"] = _text(data.reasoning)
        span.set_attributes(attributes)
        span.end(_ns(at))
        session.model_call = None
        if self.instruments is None:
            return
        model = {"gen_ai.request.model": session.model}
        for kind, count in kinds.items():
            if count:
                self.instruments.tokens.add(count, {**model, "type": kind})
        if data.cost_usd:
            self.instruments.cost.add(data.cost_usd, model)
        self.instruments.model_calls.record(max(0.0, at - session.model_started), model)

    def _model_error(self, session: _Session, data: ErrorEvent, at: float) -> None:
        span = session.model_call
        if span is not None:
            span.set_status(Status(StatusCode.ERROR, data.message[:CONTENT_LIMIT]))
            span.set_attribute("error.type", data.error_type)
            span.end(_ns(at))
            session.model_call = None
        if self.instruments is not None:
            self.instruments.errors.add(
                1, {"error.type": data.error_type, "gen_ai.request.model": session.model}
            )

    def _start_tool(self, session: _Session, data: ToolCallStartEvent, at: float) -> None:
        parent = session.input or session.span
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": data.tool_name,
            "gen_ai.tool.call.id": data.call_id,
        }
        if data.tool_kind == "execute":  # as the tool declares (actors.tools.tool)
            attributes["troupe.tool.kind"] = "command"
        if self.capture_content:
            arguments = json.dumps(data.arguments, default=str)
            attributes["troupe.tool.arguments"] = _text(arguments)
            command = data.arguments.get("command")
            if isinstance(command, str):
                attributes["troupe.command"] = _text(command)
        session.tools[data.call_id] = self._child(
            parent, f"execute_tool {data.tool_name}", at, SpanKind.INTERNAL, attributes
        )

    def _end_tool(self, session: _Session, data: ToolCallEndEvent, at: float) -> None:
        span = session.tools.pop(data.call_id, None)
        if span is not None:
            if data.is_error:
                span.set_status(Status(StatusCode.ERROR))
            if self.capture_content:
                span.set_attribute("troupe.tool.output", _text(data.output))
            span.end(_ns(at))
        if self.instruments is not None:
            outcome = "error" if data.is_error else "ok"
            self.instruments.tool_calls.add(
                1, {"gen_ai.tool.name": data.tool_name, "outcome": outcome}
            )

    def _start_approval(self, session: _Session, data: ApprovalRequestEvent, at: float) -> None:
        call_id = str(data.details.get("call_id", ""))
        parent = session.tools.get(call_id) or session.input or session.span
        attributes = {"troupe.approval.action": data.action, "troupe.approval.id": data.request_id}
        span = self._child(parent, "troupe.approval", at, SpanKind.INTERNAL, attributes)
        session.approvals[data.request_id] = (span, at)

    def _end_approval(self, session: _Session, data: ApprovalResolvedEvent, at: float) -> None:
        opened = session.approvals.pop(data.request_id, None)
        if opened is None:
            return
        span, started = opened
        span.set_attributes(
            {"troupe.approval.approved": data.approved, "troupe.approval.by": data.by}
        )
        span.end(_ns(at))
        if self.instruments is not None:
            self.instruments.approval_wait.record(
                max(0.0, at - started), {"approved": data.approved, "by": data.by}
            )
