"""Hosted platforms (Azure OpenAI, Vertex AI, AWS Bedrock, OpenRouter) against the mock
provider over loopback HTTP, and the recorded streams replayed through each.

Recorded streams: Azure's own recording and every OpenAI Chat/Responses recording
through the Azure adapter; the real Vertex recordings and every Gemini recording
through the Vertex adapter (OAuth first); every Anthropic recording wrapped in AWS
event-stream frames as Bedrock sends them, decoded by botocore; the recorded Bedrock
answer (an error); OpenRouter's reasoning streams.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from actors.kernel import Runtime
from actors.mockllm import Fault, MockLLMServer, Reply, Script, ToolCallSpec, Turn, serve_mock_llm
from actors.mockllm.replay import JSON, load_replies, split_frames
from actors.mockllm.wire_bedrock import EVENT_STREAM, reframe
from actors.models import ModelSession, RetryPolicy, open_gateway
from actors.models.config import Endpoint
from actors.models.endpoints import (
    azure_endpoint,
    bedrock_endpoint,
    openrouter_endpoint,
    vertex_endpoint,
)
from actors.models.errors import ConfigurationError, InvalidRequestError
from protocol.llm import (
    Finish,
    Message,
    Request,
    StreamFailed,
    TextDelta,
    ThinkingPart,
    ToolCallEnd,
)
from tests.models import oracle
from tests.models.conftest import HANG_GUARD, SHARED
from tests.models.test_conformance import _files, check, plan

NO_RETRY = RetryPolicy(max_retries=0)
REQUEST = Request("recorded-model", [Message.user("hello")])


@asynccontextmanager
async def session_on(
    runtime: Runtime, ep: Endpoint, policy: RetryPolicy = NO_RETRY
) -> AsyncIterator[ModelSession]:
    async with open_gateway(runtime, ep, policy) as gateway:
        yield await ModelSession.connect(gateway)


async def collect(session: ModelSession, request: Request = REQUEST) -> list[Any]:
    with trio.fail_after(HANG_GUARD):
        async with session.stream(request) as events:
            return [event async for event in events]


def recordings(wire: str) -> list[str]:
    found = []
    for relative in _files():
        steps, reason = plan(relative)
        if reason is None and len(steps) == 1 and steps[0][0] == wire:
            reply = steps[0][1]
            if reply.content_type.startswith("text/event-stream"):
                found.append(relative)
    return found


async def replay_check(session: ModelSession, relative: str, wire: str) -> None:
    """The recording's one streamed answer, read through ``session``, as the oracle says."""
    body = plan(relative)[0][0][1].body
    expected = oracle.expected_stream(wire, body)
    try:
        seen = await collect(session)
    except Exception as error:  # broken before the first event: raised, not retried
        assert expected.error == "stream", error
        return
    last = seen[-1]
    if expected.error is not None:
        assert type(last) is StreamFailed, last
        return
    assert type(last) is Finish, last
    check(last.response, expected, Path(relative).name)
    assert "".join(e.delta for e in seen if type(e) is TextDelta) == last.response.text


# -- AWS Bedrock ---------------------------------------------------------------------------


def bedrock(server: MockLLMServer, **keys: str) -> Endpoint:
    creds = keys or {"access_key_id": "AKIDEXAMPLE", "secret_access_key": "secret"}
    return bedrock_endpoint("us-east-1", base_url=server.base_url, **creds)


async def test_bedrock_streams_anthropic_events_in_event_stream_frames(runtime: Runtime) -> None:
    script = Script(
        turns=[Turn(text="hello from bedrock", tool_calls=[ToolCallSpec("f", {"a": 1})])]
    )
    async with serve_mock_llm(script) as server, session_on(runtime, bedrock(server)) as session:
        request = Request("anthropic.claude-sonnet-4-5-v1:0", [Message.user("hi")])
        seen = await collect(session, request)
        response = seen[-1].response
        assert response.text == "hello from bedrock"
        assert [e.call.arguments for e in seen if type(e) is ToolCallEnd] == [{"a": 1}]
        sent = server.requests[0]
        assert sent.path == "/model/anthropic.claude-sonnet-4-5-v1%3A0/invoke-with-response-stream"
        body = sent.json()
        assert body["anthropic_version"] == "bedrock-2023-05-31"
        assert "model" not in body and "stream" not in body
        auth = sent.headers["authorization"]
        assert re.match(
            r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/us-east-1/bedrock/aws4_request, "
            r"SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*x-amz-date[a-z0-9;-]*, "
            r"Signature=[0-9a-f]{64}$",
            auth,
        ), auth
        assert "x-api-key" not in sent.headers


async def test_bedrock_complete_and_api_key_bearer(runtime: Runtime) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="whole")])) as server:
        ep = bedrock(server, bearer_token="bedrock-api-key")
        async with session_on(runtime, ep) as session:
            response = await session.complete(
                Request("anthropic.claude-haiku", [Message.user("x")])
            )
        assert response.text == "whole"
        sent = server.requests[0]
        assert sent.path.endswith("/model/anthropic.claude-haiku/invoke")
        assert sent.headers["authorization"] == "Bearer bedrock-api-key"


async def test_bedrock_exception_in_the_stream_is_a_typed_failure(runtime: Runtime) -> None:
    script = Script(turns=[Turn(text="a long enough answer", fault=Fault(error_after=3))])
    async with serve_mock_llm(script) as server, session_on(runtime, bedrock(server)) as session:
        seen = await collect(session)
    assert type(seen[-1]) is StreamFailed
    assert seen[-1].error.kind == "server"
    assert "internalServerException" in seen[-1].error.message


@pytest.mark.parametrize("relative", recordings("anthropic"))
async def test_bedrock_reads_every_recorded_anthropic_stream(
    runtime: Runtime, relative: str
) -> None:
    body = plan(relative)[0][0][1].body
    reply = Reply(200, EVENT_STREAM, reframe(split_frames(body)))
    async with (
        serve_mock_llm(replies=[reply]) as server,
        session_on(runtime, bedrock(server)) as session,
    ):
        await replay_check(session, relative, "anthropic")


async def test_the_recorded_bedrock_answer(runtime: Runtime) -> None:
    path = SHARED / "pydantic-ai/tests/cassettes/test_model_name_suggestions"
    (reply,) = load_replies(path / "test_model_name_suggestion[bedrock].yaml")
    assert "bedrock-runtime" in reply.uri
    async with (
        serve_mock_llm(replies=[reply]) as server,
        session_on(runtime, bedrock(server)) as session,
    ):
        request = Request("us.amazon.nova-micro-v1:O", [Message.user("hello")])
        with pytest.raises(InvalidRequestError) as caught:
            await session.complete(request)
    assert caught.value.status_code == 400
    assert caught.value.message == "The provided model identifier is invalid."


# -- Azure OpenAI --------------------------------------------------------------------------


async def test_azure_chat_uses_deployment_urls_and_the_api_key_header(runtime: Runtime) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="from azure")])) as server:
        ep = azure_endpoint(server.base_url, "az-key", api_version="2024-10-21")
        async with session_on(runtime, ep) as session:
            seen = await collect(session, Request("my-gpt4o", [Message.user("hi")]))
    assert seen[-1].response.text == "from azure"
    sent = server.requests[0]
    assert sent.path == "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    assert sent.headers["api-key"] == "az-key"
    assert "authorization" not in sent.headers


async def test_azure_responses_and_the_v1_routes(runtime: Runtime) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="r")])) as server:
        preview = azure_endpoint(server.base_url, "k", wire="openai_responses")
        v1 = azure_endpoint(server.base_url, "k", api_version="v1")
        async with session_on(runtime, preview) as one, session_on(runtime, v1) as two:
            await one.complete(REQUEST)
            await two.complete(REQUEST)
    paths = [r.path for r in server.requests]
    assert paths == [
        "/openai/responses?api-version=2025-04-01-preview",
        "/openai/v1/chat/completions",
    ]


@pytest.mark.parametrize("relative", recordings("openai_chat") + recordings("openai_responses"))
async def test_azure_reads_every_recorded_openai_stream(runtime: Runtime, relative: str) -> None:
    wire = plan(relative)[0][0][0]
    reply = plan(relative)[0][0][1]
    async with serve_mock_llm(replies=[reply]) as server:
        ep = azure_endpoint(server.base_url, "k", wire=wire, api_version="2024-10-21")
        async with session_on(runtime, ep) as session:
            await replay_check(session, relative, wire)


# -- Vertex AI -------------------------------------------------------------------------------


def service_account(tmp_path: Path, token_uri: str) -> tuple[Path, rsa.RSAPublicKey]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    info = {
        "type": "service_account",
        "client_email": "agent@proj.iam.gserviceaccount.com",
        "private_key": pem,
        "private_key_id": "kid-1",
        "token_uri": token_uri,
    }
    path = tmp_path / "adc.json"
    path.write_text(json.dumps(info))
    return path, key.public_key()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_vertex_gemini_with_a_service_account(runtime: Runtime, tmp_path: Path) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="from vertex")])) as server:
        adc, public = service_account(tmp_path, f"{server.base_url}/token")
        base = f"{server.base_url}/v1/projects/proj/locations/us-central1/publishers/google"
        ep = vertex_endpoint("proj", "us-central1", credentials_file=str(adc), base_url=base)
        async with session_on(runtime, ep) as session:
            first = await collect(session, Request("gemini-2.5-pro", [Message.user("hi")]))
            await session.complete(Request("gemini-2.5-pro", [Message.user("again")]))
    assert first[-1].response.text == "from vertex"
    (token_request,) = server.side_requests  # fetched once, then reused
    form = dict(p.split("=", 1) for p in token_request.body.decode().split("&"))
    assert form["grant_type"] == "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
    header, claims, signature = form["assertion"].split(".")
    public.verify(
        _unb64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    decoded = json.loads(_unb64(claims))
    assert decoded["iss"] == "agent@proj.iam.gserviceaccount.com"
    assert decoded["aud"] == f"{server.base_url}/token"
    assert decoded["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    assert json.loads(_unb64(header))["kid"] == "kid-1"
    for sent in server.requests:
        assert sent.path.startswith("/v1/projects/proj/locations/us-central1/publishers/google/")
        assert sent.headers["authorization"] == "Bearer mock-token-1"
        assert "x-goog-api-key" not in sent.headers
    assert ":streamGenerateContent" in server.requests[0].path


async def test_vertex_claude_with_an_authorized_user(runtime: Runtime, tmp_path: Path) -> None:
    adc = tmp_path / "adc.json"
    user = {
        "type": "authorized_user",
        "client_id": "cid",
        "client_secret": "cs",
        "refresh_token": "rt",
    }
    adc.write_text(json.dumps(user))
    async with serve_mock_llm(Script(turns=[Turn(text="claude on vertex")])) as server:
        base = f"{server.base_url}/v1/projects/p/locations/global/publishers/anthropic"
        ep = vertex_endpoint(
            "p",
            "global",
            wire="anthropic",
            credentials_file=str(adc),
            token_url=f"{server.base_url}/oauth/token",
            base_url=base,
        )
        async with session_on(runtime, ep) as session:
            seen = await collect(session, Request("claude-sonnet-4-5", [Message.user("hi")]))
    assert seen[-1].response.text == "claude on vertex"
    form = server.side_requests[0].body.decode()
    assert "grant_type=refresh_token" in form and "refresh_token=rt" in form
    sent = server.requests[0]
    assert sent.path.endswith("/publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict")
    assert sent.json()["anthropic_version"] == "vertex-2023-10-16"
    assert "model" not in sent.json()
    assert sent.headers["authorization"] == "Bearer mock-token-1"


async def test_vertex_credentials_of_an_unknown_kind_are_a_clear_error(
    runtime: Runtime, tmp_path: Path
) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text(json.dumps({"type": "external_account"}))
    async with serve_mock_llm() as server:
        ep = vertex_endpoint("p", "global", credentials_file=str(adc), base_url=server.base_url)
        async with session_on(runtime, ep) as session:
            with pytest.raises(ConfigurationError, match="external_account"):
                await session.complete(REQUEST)
    assert server.requests == []


@pytest.mark.parametrize("relative", recordings("gemini"))
async def test_vertex_reads_every_recorded_gemini_stream(
    runtime: Runtime, relative: str, tmp_path: Path
) -> None:
    reply = plan(relative)[0][0][1]
    async with serve_mock_llm(replies=[reply]) as server:
        adc, _ = service_account(tmp_path, f"{server.base_url}/token")
        ep = vertex_endpoint(
            "p", "us-central1", credentials_file=str(adc), base_url=server.base_url
        )
        async with session_on(runtime, ep) as session:
            await replay_check(session, relative, "gemini")


# -- OpenRouter ------------------------------------------------------------------------------

OPENROUTER = SHARED / "pydantic-ai/tests/models/cassettes/test_openrouter"


def recorded_details(body: bytes) -> tuple[str, list[dict[str, Any]]]:
    """Reasoning text and the details entries, read straight off the recording."""
    text, entries = "", []
    for line in body.decode().splitlines():
        if line.startswith("data: {"):
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices") or ():
                for detail in (choice.get("delta") or {}).get("reasoning_details") or ():
                    entries.append(detail)
                    text += detail.get("text") or ""
    return text, entries


@pytest.mark.parametrize(
    "name",
    ["test_openrouter_streaming_reasoning.yaml", "test_openrouter_stream_with_reasoning.yaml"],
)
async def test_openrouter_reasoning_details_round_trip(runtime: Runtime, name: str) -> None:
    (recorded,) = load_replies(OPENROUTER / name)
    text, entries = recorded_details(recorded.body)
    follow = Reply(
        200,
        JSON,
        [
            json.dumps(
                {
                    "id": "x",
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "again"},
                        }
                    ],
                }
            ).encode()
        ],
    )
    async with serve_mock_llm(replies=[recorded, follow]) as server:
        ep = openrouter_endpoint("or-key", server.base_url)
        async with session_on(runtime, ep) as session:
            seen = await collect(
                session, Request("m", [Message.user("q")], reasoning_effort="high")
            )
            response = seen[-1].response
            (thinking,) = [p for p in response.message.content if type(p) is ThinkingPart]
            assert thinking.provider == "openrouter"
            assert thinking.text == text
            details = json.loads(thinking.signature or "")
            signatures = [d["signature"] for d in entries if d.get("signature")]
            encrypted = [d["data"] for d in entries if d.get("data")]
            assert [d.get("signature") for d in details if d.get("signature")] == signatures
            assert [d.get("data") for d in details if d.get("data")] == encrypted
            history = [Message.user("q"), response.message, Message.user("more")]
            await session.complete(Request("m", history))
    first, second = (r.json() for r in server.requests)
    assert first["reasoning"] == {"effort": "high"} and "reasoning_effort" not in first
    assistant = second["messages"][1]
    assert assistant["reasoning_details"] == details
    assert "reasoning_content" not in assistant
    assert server.requests[0].headers["authorization"] == "Bearer or-key"


def sigv4_signature(
    method: str, path: str, headers: dict[str, str], body: bytes, secret: str
) -> tuple[str, str]:
    """(signed headers, signature) recomputed from what the server received, written from
    AWS's SigV4 documentation rather than with botocore: an independent check."""
    import hashlib
    import hmac
    from urllib.parse import quote

    authorization = headers["authorization"]
    credential = authorization.split("Credential=")[1].split(",")[0]
    _, date, region, service, _ = credential.split("/")
    signed = authorization.split("SignedHeaders=")[1].split(",")[0]
    bare, _, query = path.partition("?")
    # Services other than S3 URI-encode each path segment again.
    canonical_uri = quote(bare, safe="/-_.~")
    canonical_headers = "".join(
        f"{name}:{' '.join(headers[name].split())}\n" for name in signed.split(";")
    )
    canonical = "\n".join(
        [
            method,
            canonical_uri,
            query,
            canonical_headers,
            signed,
            hashlib.sha256(body).hexdigest(),
        ]
    )
    amz_date = headers["x-amz-date"]
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return signed, hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


async def test_bedrock_signature_verifies_against_what_was_sent(runtime: Runtime) -> None:
    async with serve_mock_llm(Script(turns=[Turn(text="signed")])) as server:
        ep = bedrock(
            server,
            access_key_id="AKIDEXAMPLE",
            secret_access_key="s3cr3t",
            session_token="session-tok",
        )
        async with session_on(runtime, ep) as session:
            request = Request("anthropic.claude-3-5-haiku-20241022-v1:0", [Message.user("hi")])
            await collect(session, request)
            await session.complete(request)
    for sent in server.requests:
        headers = {**sent.headers, "host": sent.headers["host"]}
        signed, signature = sigv4_signature(sent.method, sent.path, headers, sent.body, "s3cr3t")
        assert sent.headers["authorization"].endswith(f"Signature={signature}")
        assert {"host", "x-amz-date", "x-amz-security-token"} <= set(signed.split(";"))
        assert sent.headers["x-amz-security-token"] == "session-tok"
