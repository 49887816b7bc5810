"""The unified LLM client of ``unified-llm-spec.md`` (sections 2-4 and 6) on Troupe's
gateway actors: ``Client`` (routing, middleware, token counting), the model catalog,
and the high-level ``generate`` / ``stream`` / ``generate_object``.

    async with open_client_from_env(runtime) as client:
        result = await generate("claude-sonnet-4-5", "Say hello", client=client)
"""

from actors.models.client.catalog import (
    Catalog,
    ModelInfo,
    default_catalog,
    get_latest_model,
    get_model_info,
    list_models,
    usage_cost,
)
from actors.models.client.client import (
    Client,
    GatewayProvider,
    default_client,
    endpoints_from_env,
    get_default_client,
    open_client,
    open_client_from_env,
    set_default_client,
)
from actors.models.client.errors import (
    InvalidToolCallError,
    NoObjectGeneratedError,
    UnsupportedToolChoiceError,
)
from actors.models.client.generate import (
    AbortController,
    GenerateResult,
    StepResult,
    TimeoutConfig,
    generate,
)
from actors.models.client.middleware import (
    LoggingMiddleware,
    Middleware,
    RetryMiddleware,
    retry,
)
from actors.models.client.objects import generate_object
from actors.models.client.streaming import StepFinish, StreamAccumulator, StreamResult, stream
from actors.models.client.tokens import TokenCount
from actors.models.client.tools import Tool

__all__ = [
    "AbortController",
    "Catalog",
    "Client",
    "GatewayProvider",
    "GenerateResult",
    "InvalidToolCallError",
    "LoggingMiddleware",
    "Middleware",
    "ModelInfo",
    "NoObjectGeneratedError",
    "RetryMiddleware",
    "StepFinish",
    "StepResult",
    "StreamAccumulator",
    "StreamResult",
    "TimeoutConfig",
    "TokenCount",
    "Tool",
    "UnsupportedToolChoiceError",
    "default_catalog",
    "default_client",
    "endpoints_from_env",
    "generate",
    "generate_object",
    "get_default_client",
    "get_latest_model",
    "get_model_info",
    "list_models",
    "open_client",
    "open_client_from_env",
    "retry",
    "set_default_client",
    "stream",
    "usage_cost",
]
