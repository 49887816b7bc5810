"""Hosted platforms that serve a provider's wire behind their own URLs and auth."""

from __future__ import annotations

from collections.abc import Mapping

from actors.models.adapter import Adapter
from actors.models.config import Endpoint
from actors.models.errors import ConfigurationError


def platform_adapter(endpoint: Endpoint) -> Adapter:
    raise ConfigurationError(f"unknown platform {endpoint.platform!r}")


def platform_endpoints_from_env(environ: Mapping[str, str] | None = None) -> dict[str, Endpoint]:
    return {}
