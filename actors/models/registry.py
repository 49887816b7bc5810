"""Which adapter speaks an endpoint's wire: its descriptor's (:mod:`actors.provider_wires`).

Each adapter's module is imported when an endpoint first uses its wire: a run that
speaks one wire does not import the other providers' adapters."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from actors.models.adapter import Adapter
from actors.models.config import Endpoint, descriptor
from actors.models.errors import ConfigurationError


def adapter_factory(wire: str, platform: str = "direct") -> Any:
    """The adapter class (or factory taking the Endpoint) of ``wire`` on ``platform``."""
    described = descriptor(wire)
    target = described.adapter_on(platform)
    if target is None:
        served = ", ".join(sorted(described.platforms)) or "none"
        raise ConfigurationError(
            f"wire {described.name!r} is not served on platform {platform!r} (served on: {served})"
        )
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)


def adapter_class(wire: str) -> type[Adapter]:
    """The adapter class of ``wire`` on the provider's own API."""
    return adapter_factory(wire)


def adapter_for(endpoint: Endpoint) -> Adapter:
    return adapter_factory(endpoint.wire, endpoint.platform)(endpoint)
