"""Anthropic models on AWS Bedrock (``InvokeModel`` / ``InvokeModelWithResponseStream``).

The body is Anthropic's Messages body without ``model`` and ``stream`` (the model is
in the URL) and with ``anthropic_version: bedrock-2023-05-31``; beta flags move into
``anthropic_beta``. Every attempt is signed with SigV4 by botocore's own signer
(credentials from the endpoint, else botocore's usual chain: environment, shared
files, instance roles), or carries a Bedrock API key as a bearer token. Streams come
in AWS event-stream framing, decoded by botocore's parser (CRCs checked); each
message wraps one Anthropic event, which the Anthropic stream parser reads as usual.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

import httpx
import trio

from actors.models.adapter import HttpCall, decode_json, encode
from actors.models.anthropic import AnthropicAdapter
from actors.models.config import Endpoint
from actors.models.errors import (
    ConfigurationError,
    InvalidRequestError,
    ModelError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    StreamError,
)
from actors.models.sse import SSEEvent

BEDROCK_VERSION = "bedrock-2023-05-31"
SERVICE = "bedrock"

EXCEPTIONS: dict[str, type[ModelError]] = {
    "throttlingException": RateLimitError,
    "serviceUnavailableException": ServerError,
    "internalServerException": ServerError,
    "modelStreamErrorException": ServerError,
    "modelTimeoutException": RequestTimeoutError,
    "validationException": InvalidRequestError,
}


def bedrock_url(region: str) -> str:
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def _botocore() -> Any:
    try:
        import botocore.auth
        import botocore.awsrequest
        import botocore.credentials
        import botocore.eventstream
        import botocore.session
    except ImportError:
        raise ConfigurationError(
            "AWS Bedrock needs botocore: pip install 'troupe-agents[bedrock]'"
        ) from None
    return botocore


class EventStreamFramer:
    """AWS event-stream bytes -> the Anthropic events they carry (as SSE events)."""

    def __init__(self) -> None:
        self.buffer = _botocore().eventstream.EventStreamBuffer()

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self.buffer.add_data(chunk)
        out: list[SSEEvent] = []
        try:
            for message in self.buffer:
                out.extend(self._message(message.headers, message.payload))
        except _botocore().eventstream.ParserError as error:
            raise StreamError(f"bedrock: broken event-stream frame: {error}") from None
        return out

    def _message(self, headers: dict[str, Any], payload: bytes) -> list[SSEEvent]:
        kind = headers.get(":message-type")
        if kind == "event" and headers.get(":event-type") == "chunk":
            data = decode_json(payload, "Bedrock chunk").get("bytes", "")
            event = base64.b64decode(data)
            name = decode_json(event, "Bedrock event").get("type", "message")
            return [SSEEvent(name, event)]
        if kind in ("exception", "error"):
            code = str(headers.get(":exception-type") or headers.get(":error-code") or "")
            body = decode_json(payload, "Bedrock exception") if payload else {}
            message = body.get("message") or body.get("Message") or code
            cls = EXCEPTIONS.get(code, ServerError)
            raise cls(f"bedrock: {code}: {message}", provider=SERVICE, error_code=code, raw=body)
        return []  # initial-response and other housekeeping messages

    def close(self) -> list[SSEEvent]:
        return []


class BedrockAnthropicAdapter(AnthropicAdapter):
    """The Anthropic adapter, addressed and signed the Bedrock way."""

    provider = SERVICE

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        options = endpoint.platform_options
        self.region = options.get("region", "")
        if not self.region:
            raise ConfigurationError("bedrock: set a region (AWS_REGION)")
        self.bearer = options.get("bearer_token") or endpoint.api_key
        self._credentials: Any = None
        if not self.bearer:
            _botocore()  # fail at configuration time, not on the first call
            if options.get("access_key_id") and options.get("secret_access_key"):
                self._credentials = _botocore().credentials.Credentials(
                    options["access_key_id"],
                    options["secret_access_key"],
                    options.get("session_token") or None,
                )
        self._lock = trio.Lock()

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
        if self.bearer:
            return HttpCall(
                call.method,
                call.url,
                {**call.headers, "authorization": f"Bearer {self.bearer}"},
                call.body,
            )
        credentials = await self._frozen_credentials()
        botocore = _botocore()
        aws = botocore.awsrequest.AWSRequest(
            method=call.method, url=call.url, data=call.body, headers=dict(call.headers)
        )
        botocore.auth.SigV4Auth(credentials, SERVICE, self.region).add_auth(aws)
        signed = {name.lower(): value for name, value in aws.headers.items()}
        return HttpCall(call.method, call.url, signed, call.body)

    async def _frozen_credentials(self) -> Any:
        """Explicit keys, else botocore's chain, looked up once in a worker thread
        (it may read files or ask the instance metadata service)."""
        if self._credentials is None:
            async with self._lock:
                if self._credentials is None:
                    session = _botocore().session.get_session()
                    found = await trio.to_thread.run_sync(session.get_credentials)
                    if found is None:
                        raise ConfigurationError(
                            "bedrock: no AWS credentials (AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY, a profile, or AWS_BEARER_TOKEN_BEDROCK)"
                        )
                    self._credentials = found
        credentials = self._credentials
        if getattr(credentials, "refresh_needed", None) is None:
            return credentials  # static keys: nothing to refresh
        return await trio.to_thread.run_sync(credentials.get_frozen_credentials)

    def framer(self) -> EventStreamFramer:
        return EventStreamFramer()
