"""Calls from the server to a client that serves operations for its sessions.

A :class:`ClientEnvironment` asks its connection (``ServeOnClient``); the
connection sends a ``client_call`` frame and waits for the ``client_call_result``
with the same id, for at most its call timeout. Every way of not getting an
answer is a typed refusal the tool shows, never a hang: the client went away
(``client_unavailable``), did not answer in time (``client_timeout``), answered
with an error (its code), or answered with a result of the wrong shape.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import trio

from environments.errors import (
    EnvironmentError_,
    FileNotFound,
    InvalidRequest,
    NotAFile,
    PermissionDenied,
)
from protocol.asks import Asks
from protocol.wire_client_calls import (
    ClientCall,
    ClientCallBody,
    ClientCallCancel,
    ClientCallResult,
    RunCommandCall,
)

DEFAULT_CALL_TIMEOUT = 20.0
"""Seconds a client has to answer one call (below the environment ask's 30 s, so
the tool sees ``client_timeout`` rather than a generic timeout)."""


CANCEL_SEND_LIMIT = 2.0
"""Seconds spent queueing a ``client_call_cancel`` (the call is over either way)."""


def describe(call: ClientCallBody) -> str:
    """The call as a tool's error message names it."""
    if isinstance(call, RunCommandCall):
        return f"run_command {call.command[:80]!r}"
    return f"{call.__struct_config__.tag} {call.path}"


class ClientUnavailable(EnvironmentError_):
    """The client serving this session's operation went away before answering."""

    code = "client_unavailable"


class ClientTimeout(EnvironmentError_):
    code = "client_timeout"


class ClientCallFailed(EnvironmentError_):
    """The client answered with an error whose code names no environment error."""

    code = "client_error"


_BY_CODE: dict[str, type[EnvironmentError_]] = {
    "file_not_found": FileNotFound,
    "permission_denied": PermissionDenied,
    "not_a_file": NotAFile,
    "invalid_request": InvalidRequest,
}


class ServeOnClient(msgspec.Struct, Asks[dict[str, Any]], frozen=True):
    """To a connection: have the client serve ``call`` for ``session``."""

    session: str
    call: ClientCallBody


class _Pending(msgspec.Struct):
    answered: trio.Event = msgspec.field(default_factory=trio.Event)
    result: ClientCallResult | None = None


class PendingCalls:
    """One connection's calls awaiting their results, by the server's call id."""

    def __init__(self, timeout: float = DEFAULT_CALL_TIMEOUT) -> None:
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self.closed = False

    async def call(
        self, send: Callable[[Any], Awaitable[None]], request: ServeOnClient
    ) -> dict[str, Any]:
        """Send the call and return the client's result, or raise a typed refusal."""
        what = describe(request.call)
        if self.closed:
            raise ClientUnavailable(f"{what}: the client serving this session has disconnected")
        call_id = next(self._ids)
        pending = self._pending[call_id] = _Pending()
        timeout = self.timeout
        if isinstance(request.call, RunCommandCall):  # the client stops it at timeout_ms
            timeout += request.call.timeout_ms / 1000
        try:
            await send(ClientCall(call_id, request.session, request.call))
            with trio.move_on_after(timeout):
                await pending.answered.wait()
        finally:
            del self._pending[call_id]
            if pending.result is None and not self.closed:  # given up: tell the client
                with trio.CancelScope(shield=True), trio.move_on_after(CANCEL_SEND_LIMIT):
                    await send(ClientCallCancel(call_id))
        answer = pending.result
        if answer is None and self.closed:
            raise ClientUnavailable(f"{what}: the client disconnected before answering")
        if answer is None:
            raise ClientTimeout(f"{what}: the client did not answer within {timeout:g} s")
        if answer.error is not None:
            kind = _BY_CODE.get(answer.error.code, ClientCallFailed)
            raise kind(f"{what}: {answer.error.message} (client: {answer.error.code})")
        if answer.result is None:
            raise ClientCallFailed(f"{what}: the client's answer has neither result nor error")
        return answer.result

    def deliver(self, answer: ClientCallResult) -> bool:
        """Hand a result to its call; False when no call waits for it (late, unknown)."""
        pending = self._pending.get(answer.id)
        if pending is None or pending.answered.is_set():
            return False
        pending.result = answer
        pending.answered.set()
        return True

    def close(self) -> None:
        """The connection ended: every waiting call fails now, later ones at once."""
        self.closed = True
        for pending in self._pending.values():
            pending.answered.set()
