"""The OpenTelemetry SDK's providers for one host, exporting OTLP over HTTP.

Imported only when telemetry is on. Providers are this host's own (never the
SDK's global ones), so two hosts in one process do not share or fight over them.
Exports run on the SDK's own threads; flushing at the end runs in a worker
thread, so the event loop never waits on a collector.
"""

from __future__ import annotations

import logging
import os
import re
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
SDK_LOGGER = "opentelemetry"


class Failures(logging.Handler):
    """The SDK's export warnings (a collector down means one per retry, each with
    a stack of connection errors), kept instead of printed: the host says once,
    in one line, that telemetry was not delivered."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.first: str | None = None
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if self.first is None:
            self.first = _reason(record.getMessage())


def _reason(message: str) -> str:
    """The cause in a few words (``Connection refused``), else the message's start."""
    found = re.search(r"\[Errno -?\d+\] ([^\"')]+)", message)
    if found:
        return found.group(1).strip()
    return message.splitlines()[0][:160] if message else "unknown error"


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
        self.failures = Failures()
        sdk_log = logging.getLogger(SDK_LOGGER)
        self._propagate = sdk_log.propagate
        sdk_log.addHandler(self.failures)
        sdk_log.propagate = False
        resource = Resource.create({"service.name": "troupe", "service.version": version})
        headers = dict(settings.headers) or None
        self.tracing: TracerProvider | None = None
        self.metering: MeterProvider | None = None
        if settings.traces:
            self.tracing = TracerProvider(resource=resource, shutdown_on_exit=False)
            exporter = OTLPSpanExporter(
                endpoint=_endpoint(settings, env, "traces"), headers=headers
            )
            self.tracing.add_span_processor(BatchSpanProcessor(exporter))
        if settings.metrics:
            exporter = OTLPMetricExporter(
                endpoint=_endpoint(settings, env, "metrics"), headers=headers
            )
            reader = PeriodicExportingMetricReader(exporter)
            self.metering = MeterProvider(
                resource=resource, metric_readers=[reader], shutdown_on_exit=False
            )
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

    def release_logging(self) -> None:
        sdk_log = logging.getLogger(SDK_LOGGER)
        sdk_log.removeHandler(self.failures)
        sdk_log.propagate = self._propagate
