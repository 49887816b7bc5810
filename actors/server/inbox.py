"""Any node answers any client: a request for a session another node runs is
forwarded to it through the store (issue 37; docs/decisions.md says why not a
node-to-node WebSocket or a redirect).

The asking node leaves the request in the ``inbox`` table and rings the owner
(``NOTIFY``); the owner takes it, answers it as its own client's, writes the
reply in the row and rings back. The row is the message, the notification only
a doorbell: a lost one delays by at most a poll, never loses a request. If the
owner goes away before taking the request, it is taken back and answered where
the session goes next (or here, once this node claims it), unless the node
taking the session over took it from the inbox first: then that node answers
it. If the node that took it went away before answering, the client is told
(``unavailable``), since whether it took effect cannot be known.

Subscriptions are not forwarded: every node serves its own subscribers, from
the store (:meth:`actors.server.subscription.SessionSubscription._follow_store`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

import msgspec
import trio

from actors.server.fleet import POLL, Fleet
from actors.server.registry import SessionRegistry
from protocol.wire import (
    AbortSession,
    Codec,
    CompactSession,
    ErrorReply,
    ExtendSessionLimit,
    FollowUpSession,
    GetSession,
    InterruptSession,
    Reply,
    Request,
    ResolveApproval,
    RewindSession,
    ServerDecoder,
    SteerSession,
    SubmitInput,
    UpdateSessionConfig,
)

log = logging.getLogger("troupe.fleet")

FORWARDED = (
    SubmitInput, SteerSession, FollowUpSession, AbortSession, InterruptSession,
    ResolveApproval, UpdateSessionConfig, ExtendSessionLimit, CompactSession, RewindSession,
    GetSession,
)  # fmt: skip
"""Requests that need the session's running actor: answered by its owner."""


@functools.cache
def _codecs() -> tuple[Codec, ServerDecoder]:
    """The msgpack codecs of forwarded requests and replies, built at the first use:
    a decoder of every request and reply kind costs about half an interpreter's
    start (issue 36), which a process that never forwards (an embedded run, a lone
    node) does not pay."""
    return Codec("msgpack"), ServerDecoder("msgpack")


Answer = Callable[[Request], Awaitable[Reply | ErrorReply]]


def session_key(request: Request) -> str | None:
    """The top-level session a forwardable request is about (None for a subagent)."""
    session = getattr(request, "session", None)
    if not isinstance(session, str) or (session.startswith("/") and session.count("/") > 2):
        return None
    return session.removeprefix("/sessions/").strip("/") or None


async def forward_if_elsewhere(
    registry: SessionRegistry, request: Request
) -> Reply | ErrorReply | None:
    """The owner's reply if another node runs the session; None to answer here."""
    fleet = registry.fleet
    key = session_key(request)
    if fleet is None or key is None or not isinstance(request, FORWARDED):
        return None
    while True:
        record = registry.records.get(key)
        if record is not None and (record.live or record.unstarted):
            return None
        found = await trio.to_thread.run_sync(fleet.ownership.owner, key)
        if found is None or not found[2] or found[0].node_id == fleet.node_id:
            return None  # nobody runs it: this node claims it
        reply = await _forward(fleet, key, found[0].node_id, request)
        if reply is not None:
            return reply
        # taken back before its owner took it: route it again


async def _forward(fleet: Fleet, key: str, owner: str, request: Request) -> Any:
    """Post ``request`` for ``owner`` and wait for its reply. While nobody took
    it, it is ``owner``'s: taken back (None: route it again) once ``owner`` no
    longer holds the session. Once taken, it is the taker's, which is not always
    ``owner``: the node that takes the session over (often this very node, when
    ``owner`` died) takes what waits for it in the inbox, and may give the
    session back at rest before its answer is written. So a taker is waited for
    as long as it is alive (its heartbeat, not a lease), and only a taker gone
    away makes the client told that whether the request took effect is unknown."""
    ownership = fleet.ownership
    body = msgspec.msgpack.encode(request)  # as a client sends it, in msgpack
    row = await trio.to_thread.run_sync(ownership.post, key, body)
    while True:
        await fleet.inbox.wait(f"reply:{row}", POLL)
        reply, taken = await trio.to_thread.run_sync(ownership.collect, row)
        if reply is not None:
            return _codecs()[1].decode(reply)
        if taken is not None:
            if taken == fleet.node_id or await trio.to_thread.run_sync(ownership.alive, taken):
                continue  # its taker answers it
            await trio.to_thread.run_sync(ownership.forget, row)
            return ErrorReply(
                request.id, "unavailable",
                f"node {taken} went away while answering for session {key}; "
                "whether the request took effect is unknown: look at the session's events",
            )  # fmt: skip
        found = await trio.to_thread.run_sync(ownership.owner, key)
        if found is not None and found[2] and found[0].node_id == owner:
            continue  # still waiting for its owner to take it
        if await trio.to_thread.run_sync(ownership.withdraw, row):
            return None
        # else taken meanwhile (by the session's next owner): see who, and wait for it


async def serve_inbox(fleet: Fleet, answer: Answer) -> None:
    """Answer what other nodes left for the sessions this node runs, in the order
    they were posted for each session."""
    ownership = fleet.ownership
    queues: dict[str, list[tuple[int, Request]]] = {}
    async with trio.open_nursery() as nursery:

        async def work(session_id: str) -> None:
            queue = queues[session_id]
            while queue:
                row, request = queue.pop(0)
                try:
                    reply = await answer(request)
                except Exception as error:  # answer() replies with errors; this is the last net
                    log.exception("forwarded request failed")
                    reply = ErrorReply(request.id, "internal", f"{type(error).__name__}")
                try:
                    encoded = cast(bytes, _codecs()[0].encode(reply))  # msgpack: bytes
                    await trio.to_thread.run_sync(ownership.reply, row, encoded)
                except Exception as error:
                    log.warning("cannot write the reply to a forwarded request: %s", error)
            del queues[session_id]

        while True:
            await fleet.inbox.wait("new", POLL)
            try:
                rows = await trio.to_thread.run_sync(ownership.take)
            except Exception as error:
                log.warning("cannot read the inbox (%s); trying again", error)
                continue
            for row, session_id, body in rows:
                try:
                    request = _codecs()[0].decode(body)
                except Exception as error:
                    log.warning("an unreadable forwarded request: %s", error)
                    continue
                if not isinstance(request, msgspec.Struct):
                    continue
                first = session_id not in queues
                queues.setdefault(session_id, []).append((row, request))  # type: ignore[arg-type]
                if first:
                    nursery.start_soon(work, session_id)
