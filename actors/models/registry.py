"""Which adapter speaks an endpoint's wire: its descriptor's (:mod:`actors.models.wires`).

Each adapter's module is imported when an endpoint first uses its wire: a run that
speaks one wire does not import the other providers' adapters."""

from __future__ import annotations

from actors.models.adapter import Adapter
from actors.models.config import Endpoint
from actors.models.wires import descriptor


def adapter_class(wire: str) -> type[Adapter]:
    """The adapter class (or factory) of ``wire`` on the provider's own API."""
    return descriptor(wire).adapter_factory()


def adapter_for(endpoint: Endpoint) -> Adapter:
    return descriptor(endpoint.wire).adapter_factory(endpoint.platform)(endpoint)
