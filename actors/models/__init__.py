"""The model layer: provider adapters, SSE, errors, retries and the gateway actor.

Adapters translate :mod:`protocol.llm` requests into each provider's native wire
format and parse its answers (whole or streamed) back; the gateway actor owns one
endpoint's connection pool, concurrency cap and retry policy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actors.models.config import Endpoint, endpoint_from_env
    from actors.models.errors import (
        AbortError,
        AccessDeniedError,
        AuthenticationError,
        ConfigurationError,
        ContentFilterError,
        ContextLengthError,
        InvalidRequestError,
        ModelError,
        NetworkError,
        NotFoundError,
        ProviderError,
        QuotaExceededError,
        RateLimitError,
        RequestTimeoutError,
        ServerError,
        StreamError,
    )
    from actors.models.gateway import GatewayStats, ModelGateway, open_gateway
    from actors.models.retry import RetryPolicy
    from actors.models.session import ModelSession

_HOMES = {
    "Endpoint": "config",
    "endpoint_from_env": "config",
    "GatewayStats": "gateway",
    "ModelGateway": "gateway",
    "open_gateway": "gateway",
    "RetryPolicy": "retry",
    "ModelSession": "session",
}
"""Where each exported name lives (the errors' home is ``errors``). Imported on
first use: reading a wire's descriptor (:mod:`actors.models.wires`) or the errors
does not start httpx and the gateway."""


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"actors.models.{_HOMES.get(name, 'errors')}"), name)


__all__ = [
    "AbortError",
    "AccessDeniedError",
    "AuthenticationError",
    "ConfigurationError",
    "ContentFilterError",
    "ContextLengthError",
    "Endpoint",
    "GatewayStats",
    "InvalidRequestError",
    "ModelError",
    "ModelGateway",
    "ModelSession",
    "NetworkError",
    "NotFoundError",
    "ProviderError",
    "QuotaExceededError",
    "RateLimitError",
    "RequestTimeoutError",
    "RetryPolicy",
    "ServerError",
    "StreamError",
    "endpoint_from_env",
    "open_gateway",
]
