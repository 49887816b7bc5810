"""One asyncio event loop in a dedicated thread, and the crossing from trio into it.

asyncssh is asyncio-only; every SSH host's work runs on this loop. trio awaits an
asyncio coroutine through a thread-safe future whose completion wakes the trio
task via the trio token, so no worker thread sits blocked per call. When the trio
caller is cancelled the asyncio task is cancelled too, and asyncio's
CancelledError never reaches trio: a call cancelled on the asyncio side surfaces
as a typed :class:`ConnectionLost`. Its own module, below the bridge actor and the
hosts, so that the hosts need not import the actor that spawns them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import asyncssh
import trio

from environments.errors import ConnectionLost

T = TypeVar("T")


class AsyncioLoop:
    """An asyncio loop running forever in its own daemon thread until stopped."""

    def __init__(self, name: str = "troupe-asyncssh") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=self._serve, args=(loop,), name=self._name, daemon=True)
        self._loop, self._thread = loop, thread
        thread.start()

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the asyncio loop and return its result to trio."""
        if self._loop is None or not self.running:
            coroutine.close()
            raise ConnectionLost("the SSH bridge is not running")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return await _wait_future(future)

    async def stop(self) -> None:
        """Stop the loop (cancelling what still runs there) and join its thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
        await trio.to_thread.run_sync(thread.join)


async def _wait_future(future: concurrent.futures.Future[T]) -> T:
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def wake(_: concurrent.futures.Future[T]) -> None:
        with contextlib.suppress(trio.RunFinishedError):  # trio is gone: nobody waits
            token.run_sync_soon(done.set)

    future.add_done_callback(wake)
    try:
        await done.wait()
    except BaseException:
        future.cancel()
        raise
    try:
        return future.result()
    except (concurrent.futures.CancelledError, asyncio.CancelledError):
        raise ConnectionLost("the SSH operation was cancelled on the bridge") from None
    except (asyncssh.Error, OSError, EOFError) as exc:
        # A link error that no caller typed: still a refusal for this call, never a
        # crash of the environment actor.
        raise ConnectionLost(f"SSH: {type(exc).__name__}: {exc}") from None
