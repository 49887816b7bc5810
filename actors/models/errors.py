"""The error taxonomy of the unified LLM spec, and classification of provider errors.

A provider error is classified from, in order of trust: the provider's own error
type or code (``rate_limit_error``, ``RESOURCE_EXHAUSTED``, ``insufficient_quota``),
then the HTTP status, then words in its message ("context length", "safety").
``retry_after`` comes from the ``Retry-After`` header or Gemini's ``RetryInfo``.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import msgspec

from protocol.llm import ErrorInfo


class ModelError(Exception):
    """Base of every model-layer error. ``kind`` names it in :class:`ErrorInfo`."""

    kind = "unknown"
    default_retryable = True

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        error_code: str | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        raw: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status_code = status_code
        self.error_code = error_code
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after
        self.raw = raw

    def info(self) -> ErrorInfo:
        """This error as a Struct, for stream events and messages between actors."""
        return ErrorInfo(
            self.kind,
            self.message,
            self.provider,
            self.status_code,
            self.error_code,
            self.retryable,
            self.retry_after,
            self.raw,
        )


class ProviderError(ModelError):
    kind = "provider"


class AuthenticationError(ProviderError):
    kind = "authentication"
    default_retryable = False


class AccessDeniedError(ProviderError):
    kind = "access_denied"
    default_retryable = False


class NotFoundError(ProviderError):
    kind = "not_found"
    default_retryable = False


class InvalidRequestError(ProviderError):
    kind = "invalid_request"
    default_retryable = False


class RateLimitError(ProviderError):
    kind = "rate_limit"


class ServerError(ProviderError):
    kind = "server"


class ContentFilterError(ProviderError):
    kind = "content_filter"
    default_retryable = False


class ContextLengthError(ProviderError):
    kind = "context_length"
    default_retryable = False


class QuotaExceededError(ProviderError):
    kind = "quota"
    default_retryable = False


class NetworkError(ModelError):
    kind = "network"


class StreamError(ModelError):
    """The stream broke or carried something unparseable (bad SSE, bad JSON)."""

    kind = "stream"


class RequestTimeoutError(ModelError):
    kind = "timeout"
    default_retryable = False


class AbortError(ModelError):
    kind = "abort"
    default_retryable = False


class ConfigurationError(ModelError):
    kind = "configuration"
    default_retryable = False


KINDS: dict[str, type[ModelError]] = {
    cls.kind: cls
    for cls in (
        ProviderError,
        AuthenticationError,
        AccessDeniedError,
        NotFoundError,
        InvalidRequestError,
        RateLimitError,
        ServerError,
        ContentFilterError,
        ContextLengthError,
        QuotaExceededError,
        NetworkError,
        StreamError,
        RequestTimeoutError,
        AbortError,
        ConfigurationError,
    )
}


def from_info(info: ErrorInfo) -> ModelError:
    """Rebuild the typed exception that an :class:`ErrorInfo` describes."""
    cls = KINDS.get(info.kind, ModelError)
    return cls(
        info.message,
        provider=info.provider,
        status_code=info.status_code,
        error_code=info.error_code,
        retryable=info.retryable,
        retry_after=info.retry_after,
        raw=info.raw,
    )


_BY_STATUS: dict[int, type[ModelError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: AccessDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    413: ContextLengthError,
    422: InvalidRequestError,
    429: RateLimitError,
}

_BY_CODE: dict[str, type[ModelError]] = {
    # Anthropic error types
    "authentication_error": AuthenticationError,
    "permission_error": AccessDeniedError,
    "not_found_error": NotFoundError,
    "invalid_request_error": InvalidRequestError,
    "rate_limit_error": RateLimitError,
    "api_error": ServerError,
    "overloaded_error": ServerError,
    "request_too_large": ContextLengthError,
    "timeout_error": ServerError,
    # OpenAI codes
    "insufficient_quota": QuotaExceededError,
    "context_length_exceeded": ContextLengthError,
    "invalid_api_key": AuthenticationError,
    "model_not_found": NotFoundError,
    "rate_limit_exceeded": RateLimitError,
    "server_error": ServerError,
    "content_filter": ContentFilterError,
    # AWS (Bedrock) exception names, from the ``x-amzn-ErrorType`` header
    "ValidationException": InvalidRequestError,
    "AccessDeniedException": AccessDeniedError,
    "ResourceNotFoundException": NotFoundError,
    "ThrottlingException": RateLimitError,
    "ModelNotReadyException": RateLimitError,
    "ServiceQuotaExceededException": QuotaExceededError,
    "ModelTimeoutException": RequestTimeoutError,
    "ModelErrorException": ServerError,
    "InternalServerException": ServerError,
    "ServiceUnavailableException": ServerError,
    "UnrecognizedClientException": AuthenticationError,
    "ExpiredTokenException": AuthenticationError,
    # Gemini / gRPC status names
    "NOT_FOUND": NotFoundError,
    "INVALID_ARGUMENT": InvalidRequestError,
    "FAILED_PRECONDITION": InvalidRequestError,
    "UNAUTHENTICATED": AuthenticationError,
    "PERMISSION_DENIED": AccessDeniedError,
    "RESOURCE_EXHAUSTED": RateLimitError,
    "UNAVAILABLE": ServerError,
    "INTERNAL": ServerError,
    "DEADLINE_EXCEEDED": RequestTimeoutError,
}

_BY_WORDS: tuple[tuple[tuple[str, ...], type[ModelError]], ...] = (
    (
        (
            "context length",
            "context window",
            "too many tokens",
            "maximum context",
            "input is too long",  # Bedrock
            "prompt is too long",  # Anthropic, Bedrock InvokeModel
            "exceeds the maximum number of tokens",  # Gemini
        ),
        ContextLengthError,
    ),
    (("content filter", "safety", "content policy"), ContentFilterError),
    (("quota",), QuotaExceededError),
    (("not found", "does not exist"), NotFoundError),
    (("unauthorized", "invalid key", "invalid api key", "invalid x-api-key"), AuthenticationError),
)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _duration(text: Any) -> float | None:
    """A protobuf Duration in JSON form ("34.4s")."""
    if not isinstance(text, str) or not text.endswith("s"):
        return None
    try:
        return float(text[:-1])
    except ValueError:
        return None


def _error_fields(body: Any) -> tuple[str, str | None, str | None, float | None]:
    """(message, type, code, retry delay) from any of the providers' error bodies."""
    if isinstance(body, list) and body:  # Gemini sometimes wraps the error in a list
        body = body[0]
    if not isinstance(body, dict):
        return "", None, None, None
    error = body.get("error", body)
    if isinstance(error, str):
        return error, None, None, None
    if not isinstance(error, dict):
        return "", None, None, None
    message = str(error.get("message") or "")
    kind = error.get("type") or error.get("status")
    code = error.get("code")
    delay = None
    for detail in error.get("details") or ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            delay = _duration(detail.get("retryDelay"))
    return (
        message,
        str(kind) if kind is not None else None,
        str(code) if code is not None else None,
        delay,
    )


def classify(
    provider: str,
    status: int | None,
    body: bytes | Any,
    headers: Any = None,
) -> ModelError:
    """The typed error for a provider's error answer (an HTTP error or an in-stream one).

    ``body`` is raw bytes or an already decoded JSON value; ``headers`` any mapping.
    """
    raw: Any = body
    if isinstance(body, bytes | bytearray):
        try:
            raw = msgspec.json.decode(body)
        except msgspec.DecodeError:
            raw = body.decode("utf-8", "replace")
    message, kind, code, delay = _error_fields(raw)
    if kind is None and code is None and headers:  # AWS names the error in a header
        kind = str(headers.get("x-amzn-errortype") or "").split(":")[0] or None
    if not message:
        message = raw if isinstance(raw, str) and raw else f"HTTP {status}"
    cls: type[ModelError] | None = None
    for key in (code, kind):
        if key is not None and key in _BY_CODE:
            cls = _BY_CODE[key]
            break
    if cls is InvalidRequestError and status in _BY_STATUS:
        cls = _BY_STATUS[status]  # a generic "invalid_request_error" on a 401/403/404/429
    if cls is None and status is not None:
        cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else None)
    if cls is None or cls in (InvalidRequestError, ProviderError):
        lowered = message.lower()
        for words, candidate in _BY_WORDS:
            if any(word in lowered for word in words):
                cls = candidate
                break
    if cls is None:
        cls = ProviderError  # unknown: retryable by default, as the spec asks
    retry_after, retryable = _retry_headers(headers)
    if retry_after is None:
        retry_after = delay
    if len(message) > 2000:
        message = message[:2000] + "..."
    return cls(
        message,
        provider=provider,
        status_code=status,
        error_code=code or kind,
        retry_after=retry_after,
        retryable=retryable,
        raw=raw,
    )


def _retry_headers(headers: Any) -> tuple[float | None, bool | None]:
    """(seconds to wait, whether to retry) from OpenAI's and Anthropic's headers:
    ``retry-after-ms`` (more precise, so first), ``retry-after``, ``x-should-retry``."""
    if not headers:
        return None, None
    retry_after = None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            retry_after = max(0.0, float(millis) / 1000)
        except ValueError:
            retry_after = None
    if retry_after is None:
        retry_after = parse_retry_after(headers.get("retry-after"))
    should = str(headers.get("x-should-retry") or "").strip().lower()
    retryable = True if should == "true" else False if should == "false" else None
    return retry_after, retryable
