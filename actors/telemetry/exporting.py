"""The OpenTelemetry SDK's providers for one host, exporting OTLP over HTTP.

Imported only when telemetry is on. Providers are this host's own (never the
SDK's global ones), so two hosts in one process do not share or fight over them.
Exports run on the SDK's own threads; flushing at the end runs in a worker
thread, so the event loop never waits on a collector.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from actors.telemetry.observer import Telemetry
from actors.telemetry.settings import TelemetrySettings

SCOPE = "troupe"
FLUSH_MILLIS = 5000
"""What closing waits for a collector, at most, per signal."""


def _endpoint(settings: TelemetrySettings, env: Mapping[str, str], signal: str) -> str | None:
    """The config file's endpoint, unless a variable names one (the SDK reads those)."""
    variables = ("OTEL_EXPORTER_OTLP_ENDPOINT", f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    if settings.endpoint is None or any(env.get(name) for name in variables):
        return None
    return f"{settings.endpoint.rstrip('/')}/v1/{signal}"


class Providers:
    """A tracer and a meter provider (either may be off) and the observer on them."""

    def __init__(self, settings: TelemetrySettings, version: str) -> None:
        env = os.environ
        resource = Resource.create({"service.name": "troupe", "service.version": version})
        headers = dict(settings.headers) or None
        self.tracing: TracerProvider | None = None
        self.metering: MeterProvider | None = None
        if settings.traces:
            self.tracing = TracerProvider(resource=resource)
            exporter = OTLPSpanExporter(
                endpoint=_endpoint(settings, env, "traces"), headers=headers
            )
            self.tracing.add_span_processor(BatchSpanProcessor(exporter))
        if settings.metrics:
            exporter = OTLPMetricExporter(
                endpoint=_endpoint(settings, env, "metrics"), headers=headers
            )
            reader = PeriodicExportingMetricReader(exporter)
            self.metering = MeterProvider(resource=resource, metric_readers=[reader])
        self.telemetry = Telemetry(
            self.tracing.get_tracer(SCOPE, version) if self.tracing else None,
            self.metering.get_meter(SCOPE, version) if self.metering else None,
            settings.capture_content,
        )

    def shutdown(self) -> None:
        """Export what is pending and stop (blocking: run it in a thread)."""
        if self.tracing is not None:
            self.tracing.force_flush(FLUSH_MILLIS)
            self.tracing.shutdown()
        if self.metering is not None:
            self.metering.shutdown(FLUSH_MILLIS)
