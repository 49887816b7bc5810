"""The unified LLM client of ``unified-llm-spec.md`` (sections 2-4 and 6) on Troupe's
gateway actors: ``Client`` (routing, middleware, token counting), the model catalog,
and the high-level ``generate`` / ``stream`` / ``generate_object``.

    async with open_client_from_env(runtime) as client:
        result = await generate("claude-sonnet-4-5", "Say hello", client=client)
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
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

_WHERE = {
    "Catalog": "actors.models.client.catalog",
    "ModelInfo": "actors.models.client.catalog",
    "default_catalog": "actors.models.client.catalog",
    "get_latest_model": "actors.models.client.catalog",
    "get_model_info": "actors.models.client.catalog",
    "list_models": "actors.models.client.catalog",
    "usage_cost": "actors.models.client.catalog",
    "Client": "actors.models.client.client",
    "GatewayProvider": "actors.models.client.client",
    "default_client": "actors.models.client.client",
    "endpoints_from_env": "actors.models.client.client",
    "get_default_client": "actors.models.client.client",
    "open_client": "actors.models.client.client",
    "open_client_from_env": "actors.models.client.client",
    "set_default_client": "actors.models.client.client",
    "InvalidToolCallError": "actors.models.client.errors",
    "NoObjectGeneratedError": "actors.models.client.errors",
    "UnsupportedToolChoiceError": "actors.models.client.errors",
    "AbortController": "actors.models.client.generate",
    "GenerateResult": "actors.models.client.generate",
    "StepResult": "actors.models.client.generate",
    "TimeoutConfig": "actors.models.client.generate",
    "generate": "actors.models.client.generate",
    "LoggingMiddleware": "actors.models.client.middleware",
    "Middleware": "actors.models.client.middleware",
    "RetryMiddleware": "actors.models.client.middleware",
    "retry": "actors.models.client.middleware",
    "generate_object": "actors.models.client.objects",
    "StepFinish": "actors.models.client.streaming",
    "StreamAccumulator": "actors.models.client.streaming",
    "StreamResult": "actors.models.client.streaming",
    "stream": "actors.models.client.streaming",
    "TokenCount": "actors.models.client.tokens",
    "Tool": "actors.models.client.tools",
}
"""Where each name lives: imported on first use, so that a module of the client
(the catalog, which a session reads for prices and context sizes) does not bring
the whole client, its ``generate`` and the round engine under it (issue 36)."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'actors.models.client' has no attribute {name!r}")
    return getattr(import_module(module), name)


class _Package(ModuleType):
    """``generate`` is both a function of this package and the name of its module:
    importing the module binds the name to the module, which the eager imports used
    to bind back to the function. Here a submodule never takes the name of a
    function: ``actors.models.client.generate`` stays the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _WHERE and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


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
