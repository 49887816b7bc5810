"""Google Vertex AI: Gemini and Anthropic models, authorised with an OAuth bearer.

Base URLs are per publisher:
``https://<location>-aiplatform.googleapis.com/v1/projects/<p>/locations/<l>/publishers/google``
(Gemini: the same ``models/<m>:streamGenerateContent?alt=sse`` calls as the Gemini
API) and ``.../publishers/anthropic`` (Claude: ``models/<m>:streamRawPredict`` with the
Messages body, ``anthropic_version: vertex-2023-10-16`` and no ``model`` field). The
token comes from the application-default-credentials file (see ``google_auth``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from actors.models.adapter import HttpCall, decode_json, encode
from actors.models.anthropic import AnthropicAdapter
from actors.models.config import Endpoint
from actors.models.endpoints.google_auth import GoogleCredentials, adc_path
from actors.models.gemini import GeminiAdapter

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"


def vertex_base_url(project: str, location: str, publisher: str) -> str:
    host = "aiplatform.googleapis.com"
    if location != "global":
        host = f"{location}-{host}"
    return f"https://{host}/v1/projects/{project}/locations/{location}/publishers/{publisher}"


def credentials_for(endpoint: Endpoint) -> GoogleCredentials:
    options = endpoint.platform_options
    path = Path(options["credentials_file"]) if options.get("credentials_file") else adc_path()
    return GoogleCredentials(path, options.get("token_url") or None)


async def with_bearer(
    credentials: GoogleCredentials, call: HttpCall, client: httpx.AsyncClient
) -> HttpCall:
    token = await credentials.token(client)
    headers = {**call.headers, "authorization": f"Bearer {token}"}
    return HttpCall(call.method, call.url, headers, call.body)


class VertexGeminiAdapter(GeminiAdapter):
    publisher = "google"
    """The publisher path of Vertex's URLs for these models."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.credentials = credentials_for(endpoint)

    def build(self, request: Any, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        headers = {k: v for k, v in call.headers.items() if k != "x-goog-api-key"}
        return HttpCall(call.method, call.url, headers, call.body)

    async def prepare(self, call: HttpCall, client: httpx.AsyncClient) -> HttpCall:
        return await with_bearer(self.credentials, call, client)


class VertexAnthropicAdapter(AnthropicAdapter):
    publisher = "anthropic"

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.credentials = credentials_for(endpoint)

    def build(self, request: Any, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        body = decode_json(call.body, "request")
        body.pop("model", None)
        body["anthropic_version"] = VERTEX_ANTHROPIC_VERSION
        headers = {
            k: v for k, v in call.headers.items() if k not in ("x-api-key", "anthropic-version")
        }
        method = "streamRawPredict" if stream else "rawPredict"
        url = f"{self.endpoint.base_url}/models/{request.model}:{method}"
        return HttpCall("POST", url, headers, encode(body))

    async def prepare(self, call: HttpCall, client: httpx.AsyncClient) -> HttpCall:
        return await with_bearer(self.credentials, call, client)
