"""AWS Bedrock's two wires, addressed and signed the Bedrock way (see :mod:`.aws`).

``BedrockAnthropicAdapter``: Anthropic models through ``InvokeModel`` /
``InvokeModelWithResponseStream``. The body is Anthropic's Messages body without
``model`` and ``stream`` (the model is in the URL) and with ``anthropic_version:
bedrock-2023-05-31``; beta flags move into ``anthropic_beta``. Each event-stream
message wraps one Anthropic event, which the Anthropic stream parser reads as usual.

``BedrockConverseAdapter``: any Bedrock model (Nova, Llama, Mistral, Claude, ...)
through ``Converse`` / ``ConverseStream``, translated by :mod:`actors.models.converse`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from actors.models.adapter import HttpCall, decode_json, encode
from actors.models.anthropic import AnthropicAdapter
from actors.models.config import Endpoint
from actors.models.converse import ConverseAdapter
from actors.models.endpoints.aws import SERVICE, AwsAuth, EventStreamFramer, bedrock_url

__all__ = ["BedrockAnthropicAdapter", "BedrockConverseAdapter", "bedrock_url"]

BEDROCK_VERSION = "bedrock-2023-05-31"


class BedrockAnthropicAdapter(AnthropicAdapter):
    """The Anthropic adapter, addressed and signed the Bedrock way."""

    provider = SERVICE

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.auth = AwsAuth(endpoint)

    def build(self, request: Any, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        body = decode_json(call.body, "request")
        body.pop("model", None)
        body.pop("stream", None)
        body["anthropic_version"] = BEDROCK_VERSION
        headers = {
            name: value
            for name, value in call.headers.items()
            if name not in ("x-api-key", "anthropic-version", "anthropic-beta")
        }
        beta = call.headers.get("anthropic-beta")
        if beta:
            body["anthropic_beta"] = beta.split(",")
        action = "invoke-with-response-stream" if stream else "invoke"
        headers["accept"] = "application/vnd.amazon.eventstream" if stream else "application/json"
        url = f"{self.endpoint.base_url}/model/{quote(request.model, safe='')}/{action}"
        return HttpCall("POST", url, headers, encode(body))

    async def prepare(self, call: HttpCall, client: httpx.AsyncClient) -> HttpCall:
        return await self.auth.prepare(call, client)

    def framer(self) -> EventStreamFramer:
        return EventStreamFramer()


class BedrockConverseAdapter(ConverseAdapter):
    """The Converse wire with Bedrock's authentication and event-stream framing."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.auth = AwsAuth(endpoint)

    async def prepare(self, call: HttpCall, client: httpx.AsyncClient) -> HttpCall:
        return await self.auth.prepare(call, client)

    def framer(self) -> EventStreamFramer:
        return EventStreamFramer()
