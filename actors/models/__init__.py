"""The model layer: provider adapters, SSE, errors, retries and the gateway actor.

Adapters translate :mod:`protocol.llm` requests into each provider's native wire
format and parse its answers (whole or streamed) back; the gateway actor owns one
endpoint's connection pool, concurrency cap and retry policy.

The names are imported from their modules when first used: importing one module
of the layer (its errors, its endpoint settings) does not import the gateway and
with it httpx, which a command that makes no model call never needs (issue #36).
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

_MODULE_OF = {
    "AbortError": "errors",
    "AccessDeniedError": "errors",
    "AuthenticationError": "errors",
    "ConfigurationError": "errors",
    "ContentFilterError": "errors",
    "ContextLengthError": "errors",
    "Endpoint": "config",
    "GatewayStats": "gateway",
    "InvalidRequestError": "errors",
    "ModelError": "errors",
    "ModelGateway": "gateway",
    "ModelSession": "session",
    "NetworkError": "errors",
    "NotFoundError": "errors",
    "ProviderError": "errors",
    "QuotaExceededError": "errors",
    "RateLimitError": "errors",
    "RequestTimeoutError": "errors",
    "RetryPolicy": "retry",
    "ServerError": "errors",
    "StreamError": "errors",
    "endpoint_from_env": "config",
    "open_gateway": "gateway",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


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
