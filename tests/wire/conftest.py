"""Real servers for the wire tests: the scripted provider over loopback HTTP, a
Troupe server on a free loopback port (in this process, or as a ``troupe serve``
subprocess), and real WebSocket clients."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.mockllm import MockLLMServer, Script, serve_mock_llm
from actors.server.models import ModelSettings
from actors.server.server import RunningServer, ServerConfig, run_server
from protocol.client import TroupeClient, connect
from protocol.wire import Event, SubscribeSession
from tests.environments.helpers import command_group
from tests.event_schema import check_event_frame
from tests.waiting import TEST_KILL_GRACE, workers_per_cpu

HANG_GUARD = round(30 * workers_per_cpu())
"""Seconds: 30 with a CPU to itself, more when xdist workers share the CPUs."""
REPO = str(Path(__file__).resolve().parents[2])

BOTH_STORES = pytest.mark.parametrize("store", ["sqlite", "postgresql"], indirect=True)
"""A server test whose outcome rests on what the store keeps or gives back: run on
SQLite and on a fresh database of the session's PostgreSQL (the ``store``
fixture, tests/conftest.py), in every run."""


def shell_turns(*commands: str, final: str = "All done.") -> dict[str, Any]:
    """A script: one shell call per command (one model turn each), then text."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}
        for command in commands
    ]
    turns.append({"text": final})
    return {"turns": turns, "repeat": True}


class Stack:
    """A mock provider and a Troupe server pointed at it."""

    def __init__(self, mock: MockLLMServer, server: RunningServer, data_dir: Path, work: Path):
        self.mock = mock
        self.server = server
        self.data_dir = data_dir
        self.work = work

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return self.server.token

    def client(self, **options: Any) -> AbstractAsyncContextManager[TroupeClient]:
        return connect(self.url, self.token, **options)


StartStack = Callable[..., AbstractAsyncContextManager[Stack]]


@pytest.fixture
def start_stack(tmp_path: Path, store: str) -> StartStack:
    root = Path(os.path.realpath(tmp_path))

    @asynccontextmanager
    async def start(
        script: dict[str, Any] | None = None, fallbacks: tuple[str, ...] = (), **config: Any
    ) -> AsyncIterator[Stack]:
        parsed = msgspec.convert(script or shell_turns(), Script)
        work = root / "work"
        work.mkdir(exist_ok=True)
        data_dir = root / "data"
        failure: BaseException | None = None
        async with serve_mock_llm(parsed) as mock, trio.open_nursery() as nursery:
            settings = ModelSettings("openai", mock.base_url, "test-key", fallbacks=fallbacks)
            config.setdefault("store", store)
            config.setdefault("kill_grace", TEST_KILL_GRACE)
            server_config = ServerConfig(
                data_dir=data_dir, port=0, working_dir=work, models=settings, **config
            )
            server = await nursery.start(run_server, server_config)
            try:
                yield Stack(mock, server, data_dir, work)
            except BaseException as error:  # stop the server gracefully, then re-raise
                failure = error
            finally:
                server.stop()
        if failure is not None:
            raise failure

    return start


async def events_until(
    client: TroupeClient, *kinds: str, into: list[Event] | None = None
) -> list[Event]:
    """Events up to and including the first of ``kinds``."""
    seen = [] if into is None else into
    with trio.fail_after(HANG_GUARD):
        async for event in client.events():
            check_event_frame(event)
            seen.append(event)
            if event.kind in kinds:
                return seen
    raise AssertionError(f"connection ended before {kinds}: {[e.kind for e in seen]}")


async def subscribe(client: TroupeClient, session: str, after_seq: int = 0) -> Any:
    return await client.request(SubscribeSession, session=session, after_seq=after_seq)


def end_orphaned_command(work: Path) -> None:
    """SIGKILL the process group of the command a killed server left running in
    ``work`` (found on the host: the pid a sandboxed shell writes is its PID
    namespace's), so no test leaves a process behind."""
    group = command_group(work)
    if group is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


class ServeProcess:
    """``troupe serve`` as a real process, and the URL it printed."""

    def __init__(self, process: trio.Process, url: str) -> None:
        self.process = process
        self.url = url


@asynccontextmanager
async def troupe_serve(
    data_dir: Path, work: Path, base_url: str, store: str = ""
) -> AsyncIterator[ServeProcess]:
    """Start ``python -m actors.cli serve`` on a free port (on ``--store`` when
    given); kill it on exit."""
    command = [
        sys.executable, "-m", "actors.cli", "serve", "--port", "0", "--data-dir", str(data_dir),
        "--workdir", str(work), "--base-url", base_url, "--api-key", "test-key",
        *(["--store", store] if store else []),
    ]  # fmt: skip
    process = await trio.lowlevel.open_process(command, stdout=subprocess.PIPE, cwd=REPO)
    try:
        assert process.stdout is not None
        printed = b""
        with trio.fail_after(HANG_GUARD):
            while b"\n" not in printed:
                chunk = await process.stdout.receive_some()
                assert chunk, f"troupe serve exited: {process.returncode}"
                printed += chunk
        first = printed.decode().splitlines()[0]
        yield ServeProcess(process, first.rsplit(" ", 1)[-1])
    finally:
        if process.returncode is None:
            process.kill()
        with trio.CancelScope(shield=True), trio.move_on_after(HANG_GUARD):
            await process.wait()
