"""Azure OpenAI: deployment URLs, api-key, api-version, the recordings."""

from __future__ import annotations

import pytest

from actors.kernel import Runtime
from actors.mockllm import Script, Turn, serve_mock_llm
from actors.models.endpoints import azure_endpoint
from protocol.llm import Message, Request
from tests.models.endpoints.helpers import REQUEST, collect, recordings, replay_check, session_on
from tests.models.test_conformance import plan

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
