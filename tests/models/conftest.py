"""Fixtures for the model layer: a scripted provider, a runtime, gateways on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

from actors.kernel import Runtime
from actors.mockllm import MockLLMServer, Reply, Script, serve_mock_llm
from actors.models import ModelSession, RetryPolicy, open_gateway
from actors.models.config import Timeouts, Wire, endpoint

WIRES: list[Wire] = ["openai_responses", "openai_chat", "anthropic", "gemini", "bedrock_converse"]
FAST_RETRY = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=5.0)
HANG_GUARD = 20
SHARED = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "providers"


def recorded(relative: str) -> Path:
    """A recording under :data:`SHARED`, or a skip that says where it was looked
    for: the README promises these tests skip where ``../shared`` is absent."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent: the conformance recordings are not available")
    return path


Connect = Callable[..., AbstractAsyncContextManager[tuple[MockLLMServer, ModelSession]]]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime() as rt:
        yield rt


@pytest.fixture
def connect(runtime: Runtime) -> Connect:
    """``async with connect(wire, script) as (server, session)``: a mock provider and a
    session through a real gateway actor on it (fast retries, short timeouts)."""

    @asynccontextmanager
    async def open_(
        wire: Wire,
        script: Script | None = None,
        *,
        policy: RetryPolicy = FAST_RETRY,
        stream_read: float = 30.0,
        max_concurrency: int = 16,
        replies: list[Reply] | None = None,
        server: MockLLMServer | None = None,
    ) -> AsyncIterator[tuple[MockLLMServer, ModelSession]]:
        async with AsyncExitStack() as stack:
            if server is None:
                server = await stack.enter_async_context(serve_mock_llm(script, replies=replies))
            ep = endpoint(
                wire,
                server.base_url,
                "test-key",
                timeouts=Timeouts(connect=5.0, request=60.0, stream_read=stream_read),
                max_concurrency=max_concurrency,
            )
            gateway = await stack.enter_async_context(open_gateway(runtime, ep, policy))
            yield server, await ModelSession.connect(gateway)

    return open_
