"""Vertex AI: OAuth from ADC files, Gemini and Claude, the recordings."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from actors.kernel import Runtime
from actors.mockllm import Script, Turn, serve_mock_llm
from actors.models.endpoints import vertex_endpoint
from actors.models.errors import ConfigurationError
from protocol.llm import Message, Request
from tests.models.endpoints.helpers import REQUEST, collect, recordings, replay_check, session_on
from tests.models.test_conformance import plan

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
