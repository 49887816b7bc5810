"""Answers of the mock beside model calls: token counts and an OAuth token endpoint.

* ``POST .../messages/count_tokens`` (Anthropic), ``.../models/*:countTokens``
  (Gemini) and ``.../responses/input_tokens`` (OpenAI Responses) answer a
  deterministic count: one token per whitespace-separated word of every ``text``
  string in the request, plus 3 per message or content entry. Tests compute the
  same rule on what they sent, so a client that estimates instead of asking is
  caught.
* ``POST .../token`` answers like Google's OAuth token endpoint (``access_token``,
  ``expires_in``), numbering the tokens it hands out so a test sees which was used.
"""

from __future__ import annotations

from typing import Any

import msgspec

_decode = msgspec.json.Decoder()


class SideAnswer(msgspec.Struct, frozen=True):
    status: int
    body: bytes


def mock_token_count(body: Any) -> int:
    """The mock's counting rule (see the module doc)."""
    count = 0
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "text" and isinstance(item, str):
                    count += len(item.split())
                else:
                    stack.append(item)
            if "role" in value:
                count += 3
        elif isinstance(value, list):
            stack.extend(value)
    return count


def side_answer(path: str, raw: bytes, tokens_issued: int) -> SideAnswer | None:
    """The answer for a side request, or None when ``path`` is a model call."""
    bare = path.split("?", 1)[0]
    if bare.endswith("/token"):
        token = {"access_token": f"mock-token-{tokens_issued + 1}", "expires_in": 3600}
        return SideAnswer(200, msgspec.json.encode({**token, "token_type": "Bearer"}))
    counted = bare.endswith(("/messages/count_tokens", ":countTokens", "/responses/input_tokens"))
    if not counted:
        return None
    try:
        body = _decode.decode(raw) if raw else {}
    except msgspec.DecodeError:
        return SideAnswer(400, b'{"error": {"message": "mock-llm: body is not JSON"}}')
    count = mock_token_count(body)
    if bare.endswith(":countTokens"):
        return SideAnswer(200, msgspec.json.encode({"totalTokens": count}))
    if bare.endswith("/input_tokens"):
        answer = {"object": "response.input_tokens", "input_tokens": count}
        return SideAnswer(200, msgspec.json.encode(answer))
    return SideAnswer(200, msgspec.json.encode({"input_tokens": count}))
