"""Each wire's real context-overflow error, for a mock with a small context window.

A request is counted as its JSON body's length over four (the providers' own
rule of thumb for English and code); beyond the script's ``context_window`` the
mock answers the way the provider does when a prompt is too long, so a client's
error classification is tested against the shapes it will meet (each wire's
function here is its ``overflow`` in :data:`actors.mockllm.wires.WIRES`):

- OpenAI Chat Completions: 400, ``code: context_length_exceeded`` ("This model's
  maximum context length is N tokens. However, your messages resulted in M tokens.");
- OpenAI Responses: 400, ``code: context_length_exceeded`` ("Your input exceeds the
  context window of this model.");
- Anthropic Messages: 400 ``invalid_request_error``, "prompt is too long: M tokens > N maximum";
- Gemini: 400 ``INVALID_ARGUMENT``, "The input token count (M) exceeds the maximum
  number of tokens allowed (N).";
- Bedrock InvokeModel (Anthropic's body): 400 ``ValidationException``, "prompt is too long: ...";
- Bedrock Converse: 400 ``ValidationException``, "The model returned the following
  errors: Input is too long for requested model."
"""

from __future__ import annotations

import msgspec

from actors.mockllm.wire_bedrock import error_headers as bedrock_headers

_encode = msgspec.json.encode


def request_tokens(raw: bytes) -> int:
    """The tokens a request body counts for (four bytes a token)."""
    return len(raw) // 4


Overflow = tuple[int, bytes, dict[str, str]]
"""(status, body, headers) of a wire's answer to a prompt over the window."""


def chat_overflow(tokens: int, window: int) -> Overflow:
    message = (
        f"This model's maximum context length is {window} tokens. However, your "
        f"messages resulted in {tokens} tokens. Please reduce the length of the messages."
    )
    error = {
        "message": message,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    return 400, _encode({"error": error}), {}


def responses_overflow(tokens: int, window: int) -> Overflow:
    error = {
        "message": "Your input exceeds the context window of this model. "
        "Please adjust your input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
    return 400, _encode({"error": error}), {}


def anthropic_overflow(tokens: int, window: int) -> Overflow:
    error = {
        "type": "invalid_request_error",
        "message": f"prompt is too long: {tokens} tokens > {window} maximum",
    }
    return 400, _encode({"type": "error", "error": error}), {}


def gemini_overflow(tokens: int, window: int) -> Overflow:
    message = (
        f"The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window})."
    )
    error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
    return 400, _encode({"error": error}), {}


def bedrock_overflow(tokens: int, window: int) -> Overflow:
    message = f"prompt is too long: {tokens} tokens > {window} maximum"
    return 400, _encode({"message": message}), bedrock_headers(400)


def converse_overflow(tokens: int, window: int) -> Overflow:
    message = "The model returned the following errors: Input is too long for requested model."
    return 400, _encode({"message": message}), bedrock_headers(400)
