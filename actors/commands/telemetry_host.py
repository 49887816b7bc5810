"""OpenTelemetry settings for a server a command hosts (``troupe run`` and ``troupe
acp`` embedded, ``troupe serve``), and the line ``troupe config`` shows for them."""

from __future__ import annotations

import os

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.config import ConfigError, Settings
from actors.telemetry import TelemetrySettings, telemetry_installed, telemetry_settings
from actors.telemetry.settings import describe


def host_telemetry(settings: Settings) -> TelemetrySettings:
    """The winning config file's ``[telemetry]`` under the ``OTEL_*`` variables; a
    value the exporter cannot honour, or telemetry on without the SDK installed,
    is bad input, said before anything starts."""
    try:
        telemetry = telemetry_settings(settings.telemetry, os.environ)
    except ConfigError as error:
        raise CommandError(str(error), EXIT_BAD_INPUT) from None
    if telemetry.enabled and not telemetry_installed():
        raise CommandError(
            "telemetry is on but the OpenTelemetry SDK is not installed: "
            "pip install 'troupe-agents[otel]' (or set TROUPE_TELEMETRY=0)",
            EXIT_BAD_INPUT,
        )
    return telemetry


def telemetry_line(settings: Settings) -> str:
    """``off ...`` or ``on -> ENDPOINT: traces and metrics, without ... text``."""
    return describe(host_telemetry(settings), os.environ)
