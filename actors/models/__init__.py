"""The model layer: provider adapters, SSE, errors, retries and the gateway actor.

Adapters translate :mod:`protocol.llm` requests into each provider's native wire
format and parse its answers (whole or streamed) back; the gateway actor owns one
endpoint's connection pool, concurrency cap and retry policy.
"""

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
