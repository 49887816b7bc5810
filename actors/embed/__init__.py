"""Hosts that are not trio: the runtime on a thread of its own, for asyncio services.

:class:`RuntimeThread` gives asyncio code the actor kernel (spawn, tell, ask,
subscribe); :class:`SessionHost` gives it the server's sessions in process, with the
same requests as the WebSocket client; :func:`run_sessions` is the same for a trio
program's own nursery. The asyncio hosts run trio on a dedicated thread and cross
with the trio token and ``call_soon_threadsafe`` (see :mod:`actors.embed.bridge`).
"""

from actors.embed.bridge import TrioThread
from actors.embed.runtime import BridgedRef, RuntimeThread
from actors.embed.sessions import SessionHost
from actors.embed.trio_sessions import EventStream, HostConfig, Sessions, run_sessions

__all__ = [
    "BridgedRef",
    "EventStream",
    "HostConfig",
    "RuntimeThread",
    "SessionHost",
    "Sessions",
    "TrioThread",
    "run_sessions",
]
