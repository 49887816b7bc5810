"""One asyncio event loop in a dedicated thread, the crossing from trio into it, and
the SSHBridge actor that owns it (SSH environments are its children).

trio awaits an asyncio coroutine through a thread-safe future whose completion wakes
the trio task via the trio token, so no worker thread sits blocked per call. When
the trio caller is cancelled the asyncio task is cancelled too, and asyncio's
CancelledError never reaches trio: a call cancelled on the asyncio side surfaces as
a typed :class:`ConnectionLost`.
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

from actors.kernel import Actor, ActorRef, AddressInUseError, InvalidAddressError, handler
from actors.kernel.address import validate_name
from actors.kernel.processes import ProcessLedger
from environments.envvars import EnvPolicy
from environments.errors import ConnectionLost, EnvironmentExists, InvalidRequest
from environments.ssh.connect import ConnectOptions
from environments.ssh.target import parse_target
from protocol.environment import AddSSHHost

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


class SSHBridge(Actor):
    """Owns the asyncio loop thread; SSH environments are its children.

    Stopping the bridge stops its hosts first (children before parents; each ends
    the process groups it started), then the loop, so no asyncssh work outlives
    it. A bad ``AddSSHHost`` (a name taken or not a valid address segment, a bad
    target or setting) is refused with a typed error; the other hosts are untouched.
    """

    def __init__(
        self, env_policy: EnvPolicy | None = None, ledger: ProcessLedger | None = None
    ) -> None:
        self.loop = AsyncioLoop()
        self.env_policy = env_policy
        self.ledger = ledger

    async def on_start(self) -> None:
        self.loop.start()

    async def on_stop(self) -> None:
        await self.loop.stop()

    @handler
    async def add_host(self, request: AddSSHHost) -> ActorRef:
        """Spawn the host's environment (it connects on first use)."""
        from environments.ssh.environment import SSHEnvironment

        name = _host_name(request.name)
        if name in {ref.address.rsplit("/", 1)[-1] for ref in self.ctx.child_refs}:
            raise EnvironmentExists(f"an SSH environment named {name!r} already exists")
        environment = SSHEnvironment(
            self.loop,
            parse_target(request.target),
            connect_options(request),
            working_dir=request.working_dir,
            env_policy=self.env_policy,
            ledger=self.ledger,
        )
        try:
            return await self.ctx.spawn(environment, name=name)
        except AddressInUseError:
            raise EnvironmentExists(f"an SSH environment named {name!r} already exists") from None


def _host_name(name: str) -> str:
    try:
        validate_name(name)
    except InvalidAddressError:
        valid = False
    else:
        valid = "/" not in name
    if not valid:
        raise InvalidRequest(
            f"invalid SSH environment name {name!r}: use letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def connect_options(request: AddSSHHost) -> ConnectOptions:
    """The pool's settings from the request, refusing values that cannot work."""
    positive = {
        "channels_per_connection": request.channels_per_connection,
        "max_connections": request.max_connections,
        "keepalive_interval": request.keepalive_interval,
        "keepalive_count_max": request.keepalive_count_max,
        "connect_timeout": request.connect_timeout,
    }
    for setting, value in positive.items():
        if not value > 0:
            raise InvalidRequest(f"{setting} must be greater than 0 (got {value})")
    return ConnectOptions(
        known_hosts=request.known_hosts if request.known_hosts is not None else (),
        client_keys=request.client_keys or (),
        config=request.config_files or (),
        passphrase=request.passphrase,
        agent_forwarding=request.agent_forwarding,
        keepalive_interval=request.keepalive_interval,
        keepalive_count_max=request.keepalive_count_max,
        connect_timeout=request.connect_timeout,
        channels_per_connection=request.channels_per_connection,
        max_connections=request.max_connections,
    )
