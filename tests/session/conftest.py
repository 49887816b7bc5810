"""Real sessions: the scripted provider over loopback HTTP, a real gateway actor, and
a LocalEnvironment in a temporary directory."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest
import trio

from actors.kernel import ActorRef, Runtime
from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.models import RetryPolicy, open_gateway
from actors.models.config import Timeouts, Wire, endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import PROFILES
from environments.local import LocalEnvironment
from protocol.events import EventBody, SessionEvent
from protocol.session import EventStream, SessionConfig, Submit, Subscribe, WaitIdle
from tests.event_schema import check_event_frame
from tests.waiting import TEST_KILL_GRACE

WIRE_OF_PROFILE: dict[str, Wire] = {
    "openai": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}
HANG_GUARD = 30
T = TypeVar("T", bound=EventBody)


@dataclass
class Agent:
    """A running session and what the test needs around it."""

    ref: ActorRef
    actor: SessionActor
    server: MockLLMServer
    workdir: Path
    events: EventStream
    seen: list[SessionEvent]

    async def run(self, text: str) -> list[SessionEvent]:
        """Submit ``text`` and return the events it caused, up to processing_end."""
        start = len(self.seen)
        await self.ref.tell(Submit(text))
        with trio.fail_after(HANG_GUARD):
            await self.ref.ask(WaitIdle(), timeout=None)
            await self.drain_until("processing_end", "session_end")
        return self.seen[start:]

    async def drain_until(self, *kinds: str) -> None:
        async for event in self.events:
            check_event_frame(event)
            self.seen.append(event)
            if event.kind in kinds:
                return

    def kinds(self) -> list[str]:
        return [event.kind for event in self.seen]

    def of(self, kind: type[T]) -> list[T]:
        """The bodies of the events of one kind seen so far, in order."""
        return [event.data for event in self.seen if isinstance(event.data, kind)]

    def request_bodies(self) -> list[Any]:
        return [request.json() for request in self.server.requests if request.method == "POST"]


StartAgent = Callable[..., AbstractAsyncContextManager[Agent]]


@pytest.fixture(autouse=True)
def _snapshots_in_the_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions made here without a shadow directory keep their working-tree
    snapshots in the host's cache (docs/snapshots.md): the test's, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def start_agent(tmp_path: Path) -> StartAgent:
    real_tmp = Path(os.path.realpath(tmp_path))

    @asynccontextmanager
    async def start(
        profile: str,
        script: Script | dict[str, Any],
        config: SessionConfig | None = None,
        wire: Wire | None = None,
    ) -> AsyncIterator[Agent]:
        """``wire``: another wire than the profile's own (text calls over openai_chat)."""
        if isinstance(script, dict):
            script = msgspec.convert(script, Script)
        workdir = real_tmp / "work"
        workdir.mkdir(exist_ok=True)
        async with AsyncExitStack() as stack:
            runtime = await stack.enter_async_context(
                Runtime(grace=3.0, kill_grace=TEST_KILL_GRACE)
            )
            server = await stack.enter_async_context(serve_mock_llm(script))
            ep = endpoint(
                wire or WIRE_OF_PROFILE[profile],
                server.base_url,
                "test-key",
                timeouts=Timeouts(connect=5.0, request=30.0, stream_read=30.0),
            )
            policy = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=1.0)
            gateway = await stack.enter_async_context(open_gateway(runtime, ep, policy))
            env = await runtime.spawn(LocalEnvironment(workdir), name="environments/local")
            actor = SessionActor(PROFILES[profile](), env, gateway, config)
            actor.shadow_base = str(real_tmp / "shadow")  # snapshots stay in the test's
            ref = await runtime.spawn(actor, name=f"sessions/{actor.id}")
            events = await ref.ask(Subscribe())
            yield Agent(ref, actor, server, workdir, events, [])

    return start
