"""A real Troupe server (and the scripted provider) on a trio loop of its own
thread, so that hypothesis's synchronous state machine can drive it step by step
over real connections."""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from tests.fuzz.client import FuzzConnection
from tests.wire.conftest import Stack, StartStack

T = TypeVar("T")
START_GUARD = 60.0


class TracebackRecorder(logging.Handler):
    """Every log record that carries a traceback (or is an error) from the server."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(f"{record.name}: {record.getMessage()}")


class ServerThread:
    """Starts the stack in a thread; :meth:`run` calls into its trio loop."""

    def __init__(self, start_stack: StartStack, script: dict[str, Any]) -> None:
        self._start_stack = start_stack
        self._script = script
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self.stack: Stack | None = None
        self.nursery: trio.Nursery | None = None
        self._thread = threading.Thread(target=self._main, name="fuzz-server", daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(START_GUARD) or self._failure is not None:
            raise RuntimeError(f"the server did not start: {self._failure!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(START_GUARD)

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as error:  # reported to the test by __enter__ or run
            self._failure = error
            self._ready.set()

    async def _serve(self) -> None:
        async with self._start_stack(self._script) as stack, trio.open_nursery() as nursery:
            self.stack, self.nursery = stack, nursery
            self._token = trio.lowlevel.current_trio_token()
            self._stop = trio.Event()
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def run(self, function: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``function(*args)`` on the server's loop and return its result."""
        assert self._token is not None
        return trio.from_thread.run(function, *args, trio_token=self._token)

    def connect(self, label: str, encoding: str, keep_events: bool = False) -> FuzzConnection:
        connection = FuzzConnection(label, encoding, keep_events)

        async def open_it() -> None:
            assert self.stack is not None and self.nursery is not None
            await connection.open(self.nursery, self.stack.url, self.stack.token)

        self.run(open_it)
        return connection
