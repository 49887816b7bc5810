"""Token counting: the provider's own count where it offers one, else an estimate.

Anthropic (``POST /v1/messages/count_tokens``), Gemini (``models/*:countTokens``) and
the OpenAI Responses API (``POST /v1/responses/input_tokens``) count a request
exactly, free of charge (each wire's descriptor says how: its ``token_counting``);
the request is built by the same adapter that would send it, so what is counted is
what would be sent. Other wires get the
old estimate (a quarter of the request body's bytes), marked ``exact=False``.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgspec

from actors.models.adapter import HttpCall, decode_json, encode
from actors.models.config import descriptor
from actors.models.errors import ProviderError, classify
from actors.models.session import ModelSession
from actors.models.transport import transport_error
from actors.provider_wires import TokenCounting
from protocol.llm import Request


class TokenCount(msgspec.Struct, frozen=True):
    input_tokens: int
    exact: bool
    source: str
    """The wire whose provider counted ("anthropic", "gemini", "openai_responses"), or
    "estimate"."""


def _count_call(call: HttpCall, counting: TokenCounting, model: str, base_url: str) -> HttpCall:
    """The provider's count request for ``call``: the fields its counter takes."""
    body: dict[str, Any] = decode_json(call.body, "request")
    counted: dict[str, Any] = {key: body[key] for key in counting.keys if key in body}
    if counting.wrap is not None:
        counted = {counting.wrap: {"model": f"models/{model}", **counted}}
    url = base_url + counting.path.replace("{model}", model)
    return HttpCall("POST", url, call.headers, encode(counted))


async def count_tokens(session: ModelSession, request: Request) -> TokenCount:
    """Input tokens of ``request`` on the session's endpoint (admitted like any call)."""
    conn = session.connection
    endpoint = conn.endpoint
    call = conn.adapter.build(request, stream=False)
    counting = descriptor(endpoint.wire).token_counting
    if endpoint.platform != "direct" or counting is None:
        return TokenCount(len(call.body) // 4, False, "estimate")
    counted = _count_call(call, counting, request.model, endpoint.base_url)
    provider = conn.adapter.provider
    async with session.slot():
        counted = await conn.adapter.prepare(counted, conn.client)
        try:
            response = await conn.client.post(
                counted.url, headers=counted.headers, content=counted.body
            )
        except httpx.HTTPError as error:
            raise transport_error(provider, error) from error
    if response.status_code >= 400:
        raise classify(provider, response.status_code, response.content, response.headers)
    data = decode_json(response.content, "token count")
    value = data.get(counting.result)
    if not isinstance(value, int):
        raise ProviderError(f"{provider}: no token count in {data!r:.200}", provider=provider)
    return TokenCount(value, True, endpoint.wire)
