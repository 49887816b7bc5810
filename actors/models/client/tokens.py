"""Token counting: the provider's own count where it offers one, else an estimate.

Anthropic (``POST /v1/messages/count_tokens``), Gemini (``models/*:countTokens``) and
the OpenAI Responses API (``POST /v1/responses/input_tokens``) count a request
exactly, free of charge; the request is built by the same adapter
that would send it, so what is counted is what would be sent. Other wires get the
old estimate (a quarter of the request body's bytes), marked ``exact=False``.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgspec

from actors.models.adapter import HttpCall, decode_json, encode
from actors.models.errors import ProviderError, classify
from actors.models.session import ModelSession
from actors.models.transport import transport_error
from protocol.llm import Request

ANTHROPIC_KEYS = ("model", "messages", "system", "tools", "tool_choice", "thinking")
RESPONSES_KEYS = (
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "reasoning", "text", "previous_response_id", "truncation",
)  # fmt: skip
"""What ``/responses/input_tokens`` takes of a Responses request (no stream, include...)."""
GEMINI_KEYS = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")


class TokenCount(msgspec.Struct, frozen=True):
    input_tokens: int
    exact: bool
    source: str
    """The wire whose provider counted ("anthropic", "gemini", "openai_responses"), or
    "estimate"."""


def _count_call(call: HttpCall, wire: str, model: str, base_url: str) -> HttpCall | None:
    body: dict[str, Any] = decode_json(call.body, "request")
    if wire == "anthropic":
        counted = {key: body[key] for key in ANTHROPIC_KEYS if key in body}
        return HttpCall("POST", f"{base_url}/messages/count_tokens", call.headers, encode(counted))
    if wire == "openai_responses":
        counted = {key: body[key] for key in RESPONSES_KEYS if key in body}
        url = f"{base_url}/responses/input_tokens"
        return HttpCall("POST", url, call.headers, encode(counted))
    if wire == "gemini":
        inner = {key: body[key] for key in GEMINI_KEYS if key in body}
        counted = {"generateContentRequest": {"model": f"models/{model}", **inner}}
        url = f"{base_url}/models/{model}:countTokens"
        return HttpCall("POST", url, call.headers, encode(counted))
    return None


async def count_tokens(session: ModelSession, request: Request) -> TokenCount:
    """Input tokens of ``request`` on the session's endpoint (admitted like any call)."""
    conn = session.connection
    endpoint = conn.endpoint
    call = conn.adapter.build(request, stream=False)
    counted = None
    if endpoint.platform == "direct":
        counted = _count_call(call, endpoint.wire, request.model, endpoint.base_url)
    if counted is None:
        return TokenCount(len(call.body) // 4, False, "estimate")
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
    value = data.get("totalTokens") if endpoint.wire == "gemini" else data.get("input_tokens")
    if not isinstance(value, int):
        raise ProviderError(f"{provider}: no token count in {data!r:.200}", provider=provider)
    return TokenCount(value, True, endpoint.wire)
