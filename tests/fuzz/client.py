"""A raw protocol client for the fuzzer, written from docs/protocol.md: it sends
any frame (valid, mutated or hostile) in JSON or msgpack, reads every frame back,
and checks the protocol's promises as the frames arrive."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, connect_websocket_url

from protocol.events import EPHEMERAL_KINDS

REPLY_GUARD = 30.0
"""Seconds any one reply may take: a hang guard, not a timing assertion."""


class Violation(AssertionError):
    """A promise of the protocol was broken."""


def session_key(name: str) -> str:
    """The session id a top-level name resolves to (``s-x`` or ``/sessions/s-x``)."""
    return name.removeprefix("/sessions/").strip("/")


def _slim(frame: dict[str, Any]) -> dict[str, Any]:
    """What the checks and the rules read of a reply (a long run keeps thousands)."""
    kept = ("type", "id", "code", "message", "session", "environment")
    slim = {name: frame[name] for name in kept if name in frame}
    if isinstance(slim.get("session"), dict):
        slim["session"] = {"session_id": slim["session"]["session_id"]}
    return slim


class FuzzConnection:
    """One WebSocket connection and what it has received."""

    def __init__(self, label: str, encoding: str, keep_events: bool = False) -> None:
        self.label = label
        self.keep_events = keep_events
        """Keep event frames (the resumer does, per resume); others only count them."""
        self.event_count = 0
        self.encoding = encoding
        self.websocket: WebSocketConnection | None = None
        self.replies: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        self.anonymous_errors: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.last_seq: dict[str, int] = {}
        """Per session id: the newest seq of the current subscription stream."""
        self.highest_durable: dict[str, int] = {}
        self.unsubscribed: set[str] = set()
        self.sent_ids: set[Any] = set()
        self.closed: str | None = None
        self._changed = trio.Event()

    async def open(self, nursery: trio.Nursery, url: str, token: str) -> None:
        headers = [(b"authorization", f"Bearer {token}".encode())]
        self.websocket = await connect_websocket_url(
            nursery, url, extra_headers=headers, max_message_size=64 * 1024 * 1024
        )
        hello = {"type": "hello", "version": 1, "encoding": self.encoding, "client": "fuzz"}
        await self.websocket.send_message(json.dumps(hello))
        welcome = json.loads(await self.websocket.get_message())
        if welcome.get("type") != "welcome":
            raise Violation(f"{self.label}: no welcome: {welcome}")
        nursery.start_soon(self._read)

    # -- sending -------------------------------------------------------------

    def encode(self, frame: dict[str, Any]) -> str | bytes:
        if self.encoding == "json":
            return json.dumps(frame)
        return msgspec.msgpack.encode(frame)

    async def send_raw(self, data: str | bytes) -> None:
        assert self.websocket is not None
        await self.websocket.send_message(data)

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Send a frame with an id and return its one reply."""
        self.sent_ids.add(frame["id"])
        await self.send_raw(self.encode(frame))
        return await self.reply(frame["id"])

    async def reply(self, request_id: Any) -> dict[str, Any]:
        with trio.fail_after(REPLY_GUARD):
            while not self.replies.get(request_id):
                if self.closed:
                    raise Violation(
                        f"{self.label} closed ({self.closed}) before reply {request_id}"
                    )
                await self._changed.wait()
        return self.replies[request_id][0]

    async def next_frame(self) -> None:
        """Wait for the next frame to arrive (within the hang guard)."""
        if self.closed:
            raise Violation(f"{self.label} closed ({self.closed})")
        with trio.fail_after(REPLY_GUARD):
            await self._changed.wait()

    async def anonymous_error(self, seen_before: int) -> dict[str, Any]:
        """The error frame answering a frame whose id was unreadable."""
        with trio.fail_after(REPLY_GUARD):
            while len(self.anonymous_errors) <= seen_before:
                if self.closed:
                    raise Violation(f"{self.label} closed ({self.closed}) instead of an error")
                await self._changed.wait()
        return self.anonymous_errors[seen_before]

    # -- receiving -----------------------------------------------------------

    async def _read(self) -> None:
        assert self.websocket is not None
        try:
            while True:
                message = await self.websocket.get_message()
                if isinstance(message, str):
                    frame = json.loads(message)
                else:
                    frame = msgspec.msgpack.decode(message)
                self._receive(frame)
                self._wake()
        except ConnectionClosed as closed:
            reason = closed.reason
            self.closed = f"code {reason.code}: {reason.reason}" if reason is not None else "closed"
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _receive(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "event":
            self._event(frame)
            return
        if kind == "error" and frame.get("code") == "internal":
            self.violations.append(f"{self.label}: internal error {frame}")
        request_id = frame.get("id")
        if request_id is None:
            if kind != "error":
                self.violations.append(f"{self.label}: a reply without an id: {frame}")
            self.anonymous_errors.append(frame)
            return
        if request_id not in self.sent_ids:
            self.violations.append(f"{self.label}: a reply to an id never sent: {frame}")
        self.replies[request_id].append(_slim(frame))
        if len(self.replies[request_id]) > 1:
            self.violations.append(f"{self.label}: two replies to id {request_id!r}")
        if kind == "subscribed":
            key = session_key(frame["session"])
            self.last_seq[key] = -1  # a new stream: replay starts again
            self.unsubscribed.discard(key)

    def _event(self, frame: dict[str, Any]) -> None:
        self.event_count += 1
        if self.keep_events:
            self.events.append(frame)
        key = frame["session_id"]
        if key in self.unsubscribed:
            self.violations.append(f"{self.label}: event after unsubscribe: {frame}")
        if frame.get("resent"):
            return
        seq = frame["seq"]
        if seq <= self.last_seq.get(key, -1):
            self.violations.append(
                f"{self.label}: seq {seq} ({frame['kind']}) after {self.last_seq[key]} in {key}"
            )
        self.last_seq[key] = seq
        if frame["kind"] not in EPHEMERAL_KINDS:
            self.highest_durable[key] = max(self.highest_durable.get(key, 0), seq)

    def note_unsubscribed(self, name: str) -> None:
        """After the ``ok`` of an unsubscribe: nothing more may come for it."""
        self.unsubscribed.add(session_key(name))
