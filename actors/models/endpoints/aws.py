"""What both Bedrock wires share: botocore (loaded only when Bedrock is used), the
AWS event-stream framing and SigV4 signing of every attempt.

Invoke (Anthropic's own body) and Converse (AWS's model-neutral body) differ only in
their JSON; both are signed by botocore's own signer (credentials from the endpoint,
else botocore's chain: environment, shared files, instance roles) or carry a Bedrock
API key as a bearer token, and both stream AWS event-stream messages, decoded by
botocore's parser (CRCs checked).
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import urlsplit

import httpx
import trio

from actors.models.adapter import HttpCall, decode_json
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


def region_of(url: str) -> str:
    """The region in a ``bedrock-runtime.<region>.amazonaws.com`` URL, else ''."""
    host = urlsplit(url).hostname or ""
    parts = host.split(".")
    if len(parts) >= 4 and parts[0].startswith("bedrock-runtime") and parts[-2] == "amazonaws":
        return parts[1]
    return ""


def botocore_modules() -> Any:
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
    """AWS event-stream bytes -> SSE-like events. Invoke's ``chunk`` messages carry an
    Anthropic event in base64 (named by its ``type``); Converse's messages are named
    by their ``:event-type`` (``messageStart``, ``contentBlockDelta``, ...) and carry
    the JSON as it is. Exception messages become typed errors."""

    def __init__(self) -> None:
        self.buffer = botocore_modules().eventstream.EventStreamBuffer()

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self.buffer.add_data(chunk)
        out: list[SSEEvent] = []
        try:
            for message in self.buffer:
                out.extend(self._message(message.headers, message.payload))
        except botocore_modules().eventstream.ParserError as error:
            raise StreamError(f"bedrock: broken event-stream frame: {error}") from None
        return out

    def _message(self, headers: dict[str, Any], payload: bytes) -> list[SSEEvent]:
        kind = headers.get(":message-type")
        name = headers.get(":event-type")
        if kind == "event" and name == "chunk":
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
        if kind == "event" and name and name != "initial-response":
            return [SSEEvent(str(name), payload)]
        return []  # initial-response and other housekeeping messages

    def close(self) -> list[SSEEvent]:
        return []


class AwsAuth:
    """Authenticates one Bedrock endpoint's calls: a bearer API key, or SigV4."""

    def __init__(self, endpoint: Endpoint) -> None:
        options = endpoint.platform_options
        self.bearer = options.get("bearer_token") or endpoint.api_key
        self.region = options.get("region") or region_of(endpoint.base_url)
        self._credentials: Any = None
        self.unsigned = endpoint.platform == "direct" and not self.bearer and not self.region
        """A keyless direct endpoint outside AWS (a local Converse-compatible proxy)."""
        if not self.bearer and not self.unsigned:
            if not self.region:
                raise ConfigurationError("bedrock: set a region (AWS_REGION)")
            botocore = botocore_modules()  # fail at configuration time, not on a call
            if options.get("access_key_id") and options.get("secret_access_key"):
                self._credentials = botocore.credentials.Credentials(
                    options["access_key_id"],
                    options["secret_access_key"],
                    options.get("session_token") or None,
                )
        self._lock = trio.Lock()

    async def prepare(self, call: HttpCall, client: httpx.AsyncClient) -> HttpCall:
        if self.bearer:
            headers = {**call.headers, "authorization": f"Bearer {self.bearer}"}
            return HttpCall(call.method, call.url, headers, call.body)
        if self.unsigned:
            return call
        credentials = await self._frozen_credentials()
        botocore = botocore_modules()
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
                    session = botocore_modules().session.get_session()
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
