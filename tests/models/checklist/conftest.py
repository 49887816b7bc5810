"""Unified-llm-spec §8 as tests: a client on three providers, all served by the mock.

Every provider of the client (``openai`` on the Responses API, ``anthropic``, ``gemini``)
is a real gateway actor talking HTTP to one ``troupe mock-llm`` server, so each test
sees exactly what went over the wire (``server.requests``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from actors.kernel import Runtime
from actors.mockllm import MockLLMServer, Reply, Script, serve_mock_llm
from actors.models.client import Client, Middleware, open_client
from actors.models.config import Endpoint, endpoint
from actors.models.retry import RetryPolicy

PROVIDERS = ("openai", "anthropic", "gemini")
WIRE = {"openai": "openai_responses", "anthropic": "anthropic", "gemini": "gemini"}
MODEL = {"openai": "gpt-5.2", "anthropic": "claude-opus-4-6", "gemini": "gemini-3-flash-preview"}
KEY = {"openai": "sk-openai", "anthropic": "sk-ant", "gemini": "g-key"}
FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=5.0)
HANG_GUARD = 20

Spec = Callable[..., AbstractAsyncContextManager[tuple[MockLLMServer, Client]]]


def endpoints_on(server: MockLLMServer) -> dict[str, Endpoint]:
    return {name: endpoint(WIRE[name], server.base_url, KEY[name]) for name in PROVIDERS}  # type: ignore[arg-type]


@pytest.fixture
def spec(runtime: Runtime) -> Spec:
    """``async with spec(script) as (server, client)``; default provider ``openai``."""

    @asynccontextmanager
    async def open_(
        script: Script | dict[str, Any] | None = None,
        *,
        replies: list[Reply] | None = None,
        middleware: Sequence[Middleware] = (),
        default: str | None = "openai",
    ) -> AsyncIterator[tuple[MockLLMServer, Client]]:
        if isinstance(script, dict):
            import msgspec

            script = msgspec.convert(script, Script)
        async with (
            serve_mock_llm(script, replies=replies) as server,
            open_client(
                runtime, endpoints_on(server), default_provider=default, middleware=middleware
            ) as client,
        ):
            yield server, client

    return open_
