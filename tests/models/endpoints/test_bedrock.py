"""AWS Bedrock: SigV4, event-stream framing, the recordings."""

from __future__ import annotations

import re

import pytest

from actors.kernel import Runtime
from actors.mockllm import Fault, MockLLMServer, Reply, Script, ToolCallSpec, Turn, serve_mock_llm
from actors.mockllm.replay import load_replies, split_frames
from actors.mockllm.wire_bedrock import EVENT_STREAM, reframe
from actors.models.config import Endpoint
from actors.models.endpoints import bedrock_endpoint
from actors.models.errors import InvalidRequestError
from protocol.llm import Message, Request, StreamFailed, ToolCallEnd
from tests.models.conftest import recorded
from tests.models.endpoints.helpers import collect, recordings, replay_check, session_on
from tests.models.test_conformance import plan

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
    path = recorded(
        "pydantic-ai/tests/cassettes/test_model_name_suggestions/"
        "test_model_name_suggestion[bedrock].yaml"
    )
    (reply,) = load_replies(path)
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
