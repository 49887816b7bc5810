"""Which adapter speaks which wire format.

Each adapter's module is imported when an endpoint first uses its wire: a run that
speaks one wire does not import the other providers' adapters."""

from __future__ import annotations

from importlib import import_module

from actors.models.adapter import Adapter
from actors.models.config import Endpoint

ADAPTERS: dict[str, tuple[str, str]] = {
    "openai_responses": ("actors.models.openai_responses", "OpenAIResponsesAdapter"),
    "openai_chat": ("actors.models.openai_chat", "OpenAIChatAdapter"),
    "anthropic": ("actors.models.anthropic", "AnthropicAdapter"),
    "gemini": ("actors.models.gemini", "GeminiAdapter"),
}
"""Wire -> (module, class) of its adapter."""


def adapter_class(wire: str) -> type[Adapter]:
    module, name = ADAPTERS[wire]
    return getattr(import_module(module), name)


def adapter_for(endpoint: Endpoint) -> Adapter:
    if endpoint.platform != "direct" or endpoint.wire == "bedrock_converse":
        from actors.models.endpoints import platform_adapter  # platforms import adapters

        return platform_adapter(endpoint)
    return adapter_class(endpoint.wire)(endpoint)
