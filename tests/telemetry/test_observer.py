"""The observer's translation of events the end-to-end test does not reach: an
approval wait (a span under its tool call, and the wait metric), a failed model
call (an error status and the error counter), and a host stopping with spans
open (they end, marked suspended). Events go through a real event hub; the SDK's
in-memory exporter and reader stand in for the collector."""

from __future__ import annotations

import time

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from actors.session.events import EventHub
from actors.telemetry.observer import Telemetry
from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    ErrorEvent,
    LoopStateEvent,
    SessionStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    UserInputEvent,
)


def _observed() -> tuple[EventHub, Telemetry, InMemorySpanExporter, InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    metering = MeterProvider(metric_readers=[reader])
    telemetry = Telemetry(tracing.get_tracer("t"), metering.get_meter("t"), False)
    hub = EventHub("s-1")
    telemetry.observe(hub)
    return hub, telemetry, exporter, reader


def _metrics(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, object], float]]]:
    found: dict[str, list[tuple[dict[str, object], float]]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points = found.setdefault(metric.name, [])
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    count = getattr(point, "count", None)
                    points.append((dict(point.attributes or {}), float(value or count or 0)))
    return found


def _named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (span,) = [span for span in spans if span.name == name]
    return span


def test_an_approval_wait_a_model_failure_and_a_stopping_host() -> None:
    hub, telemetry, exporter, reader = _observed()
    hub.emit(SessionStartEvent(profile="openai", model="m", working_directory="/w"))
    hub.emit(UserInputEvent("clean up"))
    hub.emit(ToolCallStartEvent("c-1", "shell", {"command": "rm -rf build"}))
    hub.emit(ApprovalRequestEvent("ap-1", "command", "rm -rf build", {"call_id": "c-1"}))
    hub.emit(ApprovalResolvedEvent("ap-1", approved=False, message="no", by="client"))
    hub.emit(ToolCallEndEvent("c-1", "shell", "denied: no", is_error=True))
    hub.emit(LoopStateEvent("thinking"))
    hub.emit(ErrorEvent("RateLimitError", "slow down"))
    telemetry.close(now=time.time())  # the host stops: the input is still open

    spans = exporter.get_finished_spans()
    tool = _named(spans, "execute_tool shell")
    approval = _named(spans, "troupe.approval")
    assert approval.parent is not None and tool.context is not None
    assert approval.parent.span_id == tool.context.span_id
    assert (
        approval.attributes is not None and approval.attributes["troupe.approval.approved"] is False
    )
    assert tool.status.status_code == StatusCode.ERROR
    model = _named(spans, "chat m")
    assert model.status.status_code == StatusCode.ERROR
    assert model.attributes is not None and model.attributes["error.type"] == "RateLimitError"
    for name in ("troupe.input", "troupe.session"):
        span = _named(spans, name)
        assert span.attributes is not None and span.attributes["troupe.suspended"] is True

    metrics = _metrics(reader)
    assert metrics["troupe.approval.wait"] == [({"approved": False, "by": "client"}, 1.0)]
    assert metrics["troupe.error.count"] == [
        ({"error.type": "RateLimitError", "gen_ai.request.model": "m"}, 1.0)
    ]
    assert metrics["troupe.tool_call.count"] == [
        ({"gen_ai.tool.name": "shell", "outcome": "error"}, 1.0)
    ]
