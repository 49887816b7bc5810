"""Azure OpenAI: the OpenAI wires at a resource's deployment URLs.

``https://<resource>.openai.azure.com/openai`` is the base. Chat Completions go to
``/deployments/<deployment>/chat/completions?api-version=<v>`` (the deployment is the
request's model unless the endpoint names one); the Responses API to
``/responses?api-version=<v>``. With ``api_version`` "v1" the newer v1 routes are used
(``/v1/chat/completions``, ``/v1/responses``; no query). The key goes in an
``api-key`` header; a Microsoft Entra token (``azure_ad_token``) as a bearer instead.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from actors.models.adapter import Adapter, HttpCall
from actors.models.openai_chat import OpenAIChatAdapter
from actors.models.openai_responses import OpenAIResponsesAdapter

DEFAULT_API_VERSION = "2025-04-01-preview"
_DROP = ("authorization", "openai-organization", "openai-project")


def azure_call(adapter: Adapter, call: HttpCall, model: str, path: str) -> HttpCall:
    """Rewrite an OpenAI call for Azure: URL, api-version and the key header."""
    endpoint = adapter.endpoint
    options = endpoint.platform_options
    version = options.get("api_version", DEFAULT_API_VERSION)
    base = endpoint.base_url.rstrip("/")
    if version == "v1":
        url = f"{base}/v1/{path}"
    elif path == "chat/completions":
        deployment = quote(options.get("deployment") or model, safe="")
        url = f"{base}/deployments/{deployment}/{path}?api-version={version}"
    else:
        url = f"{base}/{path}?api-version={version}"
    headers = {name: value for name, value in call.headers.items() if name not in _DROP}
    token = options.get("azure_ad_token")
    if token:
        headers["authorization"] = f"Bearer {token}"
    elif endpoint.api_key:
        headers["api-key"] = endpoint.api_key
    return HttpCall(call.method, url, headers, call.body)


class AzureChatAdapter(OpenAIChatAdapter):
    def build(self, request: Any, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        return azure_call(self, call, request.model, "chat/completions")


class AzureResponsesAdapter(OpenAIResponsesAdapter):
    def build(self, request: Any, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        return azure_call(self, call, request.model, "responses")
