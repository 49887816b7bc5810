"""OpenTelemetry for Troupe's hosts: traces and metrics derived from the sessions'
event streams (:mod:`actors.telemetry.observer`), exported over OTLP/HTTP.

This module is cheap to import: the SDK is imported by :func:`open_telemetry`
only when telemetry is on (it is off by default).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from actors.telemetry.settings import TelemetrySettings, telemetry_settings

if TYPE_CHECKING:
    from actors.session.events import EventHub

log = logging.getLogger("troupe.telemetry")

FLUSH_SECONDS = 5.0
"""What a host's exit waits for the collector, at most (the SDK's threads are
daemons: what is still unsent after it is dropped, and said so in one line)."""

Observer = Callable[["EventHub"], None]
"""What a host calls with each session's (and subagent's) event hub before it starts."""


@asynccontextmanager
async def open_telemetry(settings: TelemetrySettings) -> AsyncIterator[Observer | None]:
    """An observer for the block's sessions, or None when telemetry is off. On the
    way out, spans still open are ended and everything is flushed to the collector
    (in a worker thread, shielded, for :data:`FLUSH_SECONDS` at most)."""
    if not settings.enabled:
        yield None
        return
    from actors.telemetry.exporting import Providers  # the SDK only now: off costs nothing

    providers = Providers(settings, _version())
    try:
        yield providers.telemetry.observe
    finally:
        providers.telemetry.close(time.time())
        delivered = False
        with trio.CancelScope(shield=True), trio.move_on_after(FLUSH_SECONDS):
            try:  # a collector that does not answer is given up on, not waited for
                await trio.to_thread.run_sync(providers.shutdown, abandon_on_cancel=True)
                delivered = True
            except Exception as error:  # a collector's fault must not fail the host's exit
                providers.failures.first = providers.failures.first or str(error)
        if delivered:  # else the abandoned export may still log: keep it quiet
            providers.release_logging()
        failure = providers.failures.first
        if failure is not None or not delivered:
            reason = failure or f"no answer within {FLUSH_SECONDS:g} s"
            print(f"troupe: telemetry was not delivered to the collector: {reason}",
                  file=sys.stderr, flush=True)  # fmt: skip


def telemetry_installed() -> bool:
    """Whether the ``otel`` extra (the SDK and the OTLP/HTTP exporter) is installed."""
    from importlib.util import find_spec

    try:
        return all(
            find_spec(name) is not None
            for name in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
        )
    except ModuleNotFoundError:
        return False


def _version() -> str:
    from actors import __version__

    return __version__


__all__ = [
    "Observer",
    "TelemetrySettings",
    "open_telemetry",
    "telemetry_installed",
    "telemetry_settings",
]
