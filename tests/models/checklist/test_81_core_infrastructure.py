"""§8.1 Core infrastructure."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
import trio

from actors.kernel import Runtime
from actors.mockllm import serve_mock_llm
from actors.models.client import (
    Client,
    Middleware,
    default_client,
    generate,
    get_default_client,
    get_latest_model,
    get_model_info,
    list_models,
    open_client,
    open_client_from_env,
    set_default_client,
)
from actors.models.client.catalog import Catalog
from actors.models.config import endpoint
from actors.models.errors import ConfigurationError
from protocol.llm import Finish, Message, Request, Response, StreamEvent
from tests.models.checklist.conftest import Spec

HELLO = Request("gpt-5.2", [Message.user("hello")])


async def test_client_from_environment_variables(runtime: Runtime) -> None:
    async with serve_mock_llm() as server:
        env = {
            "ANTHROPIC_API_KEY": "sk-ant-env",
            "ANTHROPIC_BASE_URL": server.base_url,
            "GEMINI_API_KEY": "g-env",
            "GEMINI_BASE_URL": server.base_url,
        }
        async with open_client_from_env(runtime, env) as client:
            assert list(client.providers) == ["anthropic", "gemini"]  # only keys present
            assert client.default_provider == "anthropic"  # the first registered
            await client.complete(Request("claude-opus-4-6", [Message.user("hi")]))
    (sent,) = server.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-env"


async def test_client_programmatic_with_explicit_adapters(runtime: Runtime) -> None:
    async with serve_mock_llm() as server:
        ep = endpoint("openai_responses", server.base_url, "sk-explicit", headers={"x-custom": "v"})
        async with open_client(runtime, {"openai": ep}, default_provider="openai") as client:
            response = await client.complete(HELLO)
    assert response.text == "ok"
    assert server.requests[0].headers["x-custom"] == "v"
    assert server.requests[0].headers["authorization"] == "Bearer sk-explicit"


async def test_provider_routing_by_the_provider_field(spec: Spec) -> None:
    async with spec() as (server, client):
        for name in ("gemini", "anthropic", "openai"):
            response = await client.complete(Request("m", [Message.user("hi")], provider=name))
            assert response.provider == ("openai" if name == "openai" else name)
    paths = [r.path for r in server.requests]
    assert paths == ["/v1beta/models/m:generateContent", "/v1/messages", "/v1/responses"]


async def test_default_provider_when_the_request_names_none(spec: Spec) -> None:
    async with spec(default="gemini") as (server, client):
        await client.complete(HELLO)
    assert ":generateContent" in server.requests[0].path


async def test_configuration_error_without_provider_or_default(spec: Spec) -> None:
    async with spec(default=None) as (server, client):
        with pytest.raises(ConfigurationError, match="no default provider"):
            await client.complete(HELLO)
        with pytest.raises(ConfigurationError, match="unknown provider"):
            await client.complete(Request("m", [Message.user("x")], provider="nope"))
    assert server.requests == []
    with pytest.raises(ConfigurationError):
        Client({}, default_provider="openai")


class Recorder(Middleware):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    async def complete(self, request: Request, call_next: Any) -> Response:
        self.log.append(f"{self.name}:request")
        response = await call_next(request)
        self.log.append(f"{self.name}:response")
        return response

    async def stream(self, request: Request, call_next: Any) -> AsyncGenerator[StreamEvent]:
        self.log.append(f"{self.name}:request")
        async for event in super().stream(request, call_next):
            if type(event) is Finish:
                self.log.append(f"{self.name}:finish")
            yield event


async def test_middleware_order_onion(spec: Spec) -> None:
    log: list[str] = []
    chain = [Recorder("first", log), Recorder("second", log)]
    async with spec(middleware=chain) as (_, client):
        await client.complete(HELLO)
        assert log == ["first:request", "second:request", "second:response", "first:response"]
        log.clear()
        async with client.stream(HELLO) as events:
            [event async for event in events]
    # Streaming: the inner layer sees each event first, as the response phase is reversed.
    assert log == ["first:request", "second:request", "second:finish", "first:finish"]


async def test_default_client_set_explicitly(spec: Spec) -> None:
    async with spec() as (server, client):
        set_default_client(client)
        try:
            result = await generate("gpt-5.2", "hi")
        finally:
            set_default_client(None)
    assert result.text == "ok"
    assert len(server.requests) == 1


async def test_default_client_lazy_initialisation_from_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    async with serve_mock_llm() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-lazy")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        with pytest.raises(ConfigurationError, match="no default client"):
            get_default_client()  # nothing made yet
        async with trio.open_nursery() as nursery:  # two first uses at once: one client
            for _ in range(2):
                nursery.start_soon(generate, "claude-opus-4-6", "hi")
        result = await generate("claude-opus-4-6", "again")
        made = get_default_client()
        assert await default_client() is made
        assert list(made.providers) == ["anthropic"] and made.default_provider == "anthropic"
    assert result.text == "ok"
    assert [r.headers["x-api-key"] for r in server.requests] == ["sk-lazy"] * 3


def test_model_catalog_lookups() -> None:
    opus = get_model_info("claude-opus-4-6")
    assert opus is not None and opus.provider == "anthropic"
    assert opus.context_window == 200_000 and opus.supports_reasoning
    assert get_model_info("sonnet") == get_model_info("claude-sonnet-4-5")  # alias
    assert get_model_info("claude-sonnet-4-5-20250929") is not None  # dated id
    assert get_model_info("openai/gpt-5.2") == get_model_info("gpt-5.2")  # routed id
    assert get_model_info("no-such-model") is None  # advisory, not restrictive
    gemini = list_models("gemini")
    assert gemini and {m.provider for m in gemini} == {"gemini"}
    assert len(list_models()) > len(gemini)
    latest = get_latest_model("openai")
    assert latest is not None and latest.id == "gpt-5.2"
    no_reasoning = Catalog([m for m in list_models() if not m.supports_reasoning])
    assert no_reasoning.latest("openai", "reasoning") is None
    assert get_latest_model("gemini", "vision") is not None


def test_catalog_file_errors_are_clear(tmp_path: Any) -> None:
    bad = tmp_path / "catalog.json"
    bad.write_text('{"models": [{"id": 3}]}')
    with pytest.raises(ConfigurationError, match="catalog"):
        Catalog.load(bad)
