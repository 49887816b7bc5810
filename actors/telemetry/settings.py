"""Whether and where Troupe exports OpenTelemetry, from the environment and the
config file's ``[telemetry]`` table. Pure data: nothing here imports the SDK, so
a run with telemetry off (the default) never pays for it.

The standard variables win over the file, as operators expect of any program
instrumented with OpenTelemetry:

- ``TROUPE_TELEMETRY=1`` (or ``0``) turns export on (or off) whatever the file says;
  ``OTEL_SDK_DISABLED=true`` turns it off.
- ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
  ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``,
  ``OTEL_EXPORTER_OTLP_TIMEOUT``, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
  ``OTEL_METRIC_EXPORT_INTERVAL`` and ``OTEL_BSP_*`` are read by the SDK itself.
- ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER``: ``otlp`` (the default) or
  ``none``; ``OTEL_EXPORTER_OTLP_PROTOCOL``: ``http/protobuf`` only (the exporter
  Troupe ships).
- ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` adds prompt and
  output text (the GenAI instrumentations' switch); off by default.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from actors.config.files import ConfigError, TelemetrySection

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off", "")
PROTOCOL = "http/protobuf"
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SIGNAL_VARIABLES = {"traces": "OTEL_TRACES_EXPORTER", "metrics": "OTEL_METRICS_EXPORTER"}


class TelemetrySettings(msgspec.Struct, frozen=True):
    """What a host exports; ``enabled`` False (the default) means nothing at all."""

    enabled: bool = False
    traces: bool = True
    metrics: bool = True
    endpoint: str | None = None
    """From the config file only: the SDK reads the variables itself, and they win."""
    headers: dict[str, str] = {}
    capture_content: bool = False


def _flag(env: Mapping[str, str], name: str) -> bool | None:
    value = env.get(name)
    if value is None:
        return None
    word = value.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise ConfigError(f"${name} must be true or false, not {value!r}")


def telemetry_settings(
    section: TelemetrySection | None, env: Mapping[str, str]
) -> TelemetrySettings:
    """The effective settings: ``section`` (the winning config file's table, or
    None) under the environment. Values the exporter cannot honour are a
    :class:`ConfigError`, said before anything starts."""
    section = section or TelemetrySection()
    enabled = _flag(env, "TROUPE_TELEMETRY")
    enabled = section.enabled if enabled is None else enabled
    if _flag(env, "OTEL_SDK_DISABLED"):
        enabled = False
    if not enabled:
        return TelemetrySettings()
    signals: dict[str, bool] = {}
    for signal, variable in SIGNAL_VARIABLES.items():
        chosen = env.get(variable, "otlp").strip().lower() or "otlp"
        if chosen not in ("otlp", "none"):
            raise ConfigError(f"${variable}={chosen!r}: Troupe exports otlp (or none)")
        signals[signal] = chosen == "otlp"
    for variable in (
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    ):
        protocol = env.get(variable, PROTOCOL).strip() or PROTOCOL
        if protocol != PROTOCOL:
            raise ConfigError(f"${variable}={protocol!r}: Troupe's exporter speaks {PROTOCOL}")
    content = _flag(env, CONTENT_VARIABLE)
    return TelemetrySettings(
        enabled=True,
        traces=signals["traces"],
        metrics=signals["metrics"],
        endpoint=section.endpoint,
        headers=dict(section.headers),
        capture_content=section.capture_content if content is None else content,
    )


def describe(settings: TelemetrySettings, env: Mapping[str, str]) -> str:
    """One line for ``troupe config``: off, or where spans and metrics go and
    whether text goes with them."""
    if not settings.enabled:
        return "off (TROUPE_TELEMETRY=1 or [telemetry] enabled = true; docs/telemetry.md)"
    endpoint = (
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or settings.endpoint
        or "http://localhost:4318 (the exporter's default)"
    )
    signals = [name for name, on in (("traces", settings.traces), ("metrics", settings.metrics))
               if on]  # fmt: skip
    text = "with" if settings.capture_content else "without"
    return f"on -> {endpoint}: {' and '.join(signals) or 'nothing'}, {text} prompt and output text"
