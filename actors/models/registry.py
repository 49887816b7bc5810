"""Which adapter speaks which wire format."""

from __future__ import annotations

from actors.models.adapter import Adapter
from actors.models.anthropic import AnthropicAdapter
from actors.models.config import Endpoint
from actors.models.gemini import GeminiAdapter
from actors.models.openai_chat import OpenAIChatAdapter
from actors.models.openai_responses import OpenAIResponsesAdapter

ADAPTERS: dict[str, type[Adapter]] = {
    "openai_responses": OpenAIResponsesAdapter,
    "openai_chat": OpenAIChatAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
}


def adapter_for(endpoint: Endpoint) -> Adapter:
    if endpoint.platform != "direct" or endpoint.wire == "bedrock_converse":
        from actors.models.endpoints import platform_adapter  # platforms import adapters

        return platform_adapter(endpoint)
    return ADAPTERS[endpoint.wire](endpoint)
