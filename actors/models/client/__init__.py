"""The unified LLM client of ``unified-llm-spec.md`` (sections 2-4 and 6) on Troupe's
gateway actors: ``Client`` (routing, middleware, token counting), the model catalog,
and the high-level ``generate`` / ``stream`` / ``generate_object``.

    async with open_client_from_env(runtime) as client:
        result = await generate("claude-sonnet-4-5", "Say hello", client=client)

The names are imported from their modules when first used (``__getattr__``): a
session needs only the catalog, and importing it must not import the whole client.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODULE_OF = {
    "Catalog": "catalog",
    "ModelInfo": "catalog",
    "default_catalog": "catalog",
    "get_latest_model": "catalog",
    "get_model_info": "catalog",
    "list_models": "catalog",
    "usage_cost": "catalog",
    "Client": "client",
    "GatewayProvider": "client",
    "default_client": "client",
    "endpoints_from_env": "client",
    "get_default_client": "client",
    "open_client": "client",
    "open_client_from_env": "client",
    "set_default_client": "client",
    "InvalidToolCallError": "errors",
    "NoObjectGeneratedError": "errors",
    "UnsupportedToolChoiceError": "errors",
    "AbortController": "generate",
    "GenerateResult": "generate",
    "StepResult": "generate",
    "TimeoutConfig": "generate",
    "generate": "generate",
    "LoggingMiddleware": "middleware",
    "Middleware": "middleware",
    "RetryMiddleware": "middleware",
    "retry": "middleware",
    "generate_object": "objects",
    "StepFinish": "streaming",
    "StreamAccumulator": "streaming",
    "StreamResult": "streaming",
    "stream": "streaming",
    "TokenCount": "tokens",
    "Tool": "tools",
}
"""Each exported name's module in this package."""


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


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
