"""What the hosted-platform tests share. Each platform (Azure OpenAI, Vertex AI, AWS
Bedrock, OpenRouter) is tested against the mock provider over loopback HTTP, and with
the recorded streams replayed through it.

Recorded streams: Azure's own recording and every OpenAI Chat/Responses recording
through the Azure adapter; the real Vertex recordings and every Gemini recording
through the Vertex adapter (OAuth first); every Anthropic recording wrapped in AWS
event-stream frames as Bedrock sends them, decoded by botocore; the recorded Bedrock
answer (an error); OpenRouter's reasoning streams.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from actors.kernel import Runtime
from actors.models import ModelSession, RetryPolicy, open_gateway
from actors.models.config import Endpoint
from protocol.llm import (
    Finish,
    Message,
    Request,
    StreamFailed,
    TextDelta,
)
from tests.models import oracle
from tests.models.conftest import HANG_GUARD
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
