"""The scripted provider server: HTTP/1.1 over TCP with h11, real SSE framing.

Written on h11 rather than a framework so that every fault is real: a stall is a
response that stops sending, a drop closes the TCP connection mid-body, and the
client going away is seen at once by a task that watches the socket while the
response is written. Binds 127.0.0.1 on a free port by default.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import msgspec
import trio

from actors.mockllm.answer import make_answer
from actors.mockllm.overflow import request_tokens
from actors.mockllm.replay import JSON, SSE, Reply
from actors.mockllm.script import Fault, Script, ToolCallSpec, Turn
from actors.mockllm.side_routes import side_answer
from actors.mockllm.wire_bedrock import BODY_FORMAT, EVENT_STREAM
from actors.mockllm.wires import (
    WIRES,
    Wire,
    count_model_turns,
    count_tool_results,
    first_user_text,
    last_round,
    overflow_error,
    route,
)

_decode = msgspec.json.Decoder()
MAX_REQUEST = 64 * 1024 * 1024


class RecordedRequest(msgspec.Struct, frozen=True):
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    wire: str | None

    def json(self) -> Any:
        return _decode.decode(self.body) if self.body else None


class _Gone(Exception):
    """The client closed the connection (or we dropped it on purpose)."""


def _has_tools(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    config = body.get("toolConfig")  # Bedrock Converse
    return bool(body.get("tools") or (isinstance(config, dict) and config.get("tools")))


class MockLLMServer:
    """State of one running mock: what it was asked, and what it saw of its clients."""

    def __init__(self, script: Script, replies: list[Reply] | None = None) -> None:
        self.script = script
        self.replies = list(replies or [])
        self.requests: list[RecordedRequest] = []
        self.side_requests: list[RecordedRequest] = []
        """Token counts and OAuth token requests (see :mod:`.side_routes`)."""
        self.disconnects = 0
        self.active = 0
        self.max_active = 0
        self.port = 0
        self.host = "127.0.0.1"
        self._changed = trio.Event()
        self.hold: Callable[[MockLLMServer], bool] | None = None
        """A test's stop in the middle of a model call: a request for which it holds
        (called once the request is recorded, the last of ``requests``) gets no
        answer until :meth:`release`, so a client can be killed or interrupted
        while it waits. ``holding`` counts the requests it held."""
        self.holding = 0
        self._released = trio.Event()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def release(self) -> None:
        """Answer the held requests (to whoever is still there) and hold no more."""
        self.hold = None
        self._released.set()
        self._released = trio.Event()

    async def wait_until(self, predicate: Callable[[MockLLMServer], bool]) -> None:
        """Return once ``predicate(server)`` holds (wrap it in a deadline)."""
        while not predicate(self):
            await self._changed.wait()

    # -- connections ---------------------------------------------------------------

    async def handle(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST)
        try:
            while True:
                got = await self._read_request(conn, stream)
                if got is None:
                    return
                keep = await self._respond(conn, stream, *got)
                if not keep or conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (_Gone, trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            with trio.CancelScope(shield=True):
                await stream.aclose()

    async def _read_request(
        self, conn: h11.Connection, stream: trio.SocketStream
    ) -> tuple[h11.Request, bytes] | None:
        request: h11.Request | None = None
        body: list[bytes] = []
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                return request, b"".join(body)
            else:  # ConnectionClosed
                return None

    # -- answering -------------------------------------------------------------------

    def _plan(self, wire: str, body: Any) -> Turn:
        wire = BODY_FORMAT.get(wire, wire)
        script = self.script
        if script.rounds is not None and script.text_rounds and not _has_tools(body):
            # A client calling tools in text (no ``tools`` in the request): the call
            # comes written in the answer, and each model turn so far was one round.
            done = count_model_turns(wire, body)
            if done < script.rounds:
                call = json.dumps({"name": script.rounds_tool, "arguments": {"round": done + 1}})
                return Turn(text=f"<tool_call>\n{call}\n</tool_call>")
            return Turn(text=script.rounds_text)
        if script.conversations:
            opening = first_user_text(wire, body)
            for conversation in script.conversations:
                if conversation.match in opening:
                    turn = count_model_turns(wire, body)
                    if turn < len(conversation.turns):
                        return conversation.turns[turn]
                    return Turn(fault=Fault(status=500, message="mock-llm: conversation over"))
        if script.rounds is not None:
            done = max(count_tool_results(wire, body), last_round(wire, body, script.rounds_tool))
            if done < script.rounds:
                arguments = {**script.rounds_arguments, "round": done + 1}
                call = ToolCallSpec(script.rounds_tool, arguments, id=f"round-{done + 1}")
                return Turn(tool_calls=[call])
            return Turn(text=script.rounds_text)
        index = len(self.requests) - 1
        if not script.turns:
            return Turn(text="ok")
        if index >= len(script.turns):
            if not script.repeat:
                return Turn(fault=Fault(status=500, message="mock-llm: the script has run out"))
            index = len(script.turns) - 1
        return script.turns[index]

    async def _respond(
        self, conn: h11.Connection, stream: trio.SocketStream, request: h11.Request, raw: bytes
    ) -> bool:
        path = request.target.decode()
        headers = {name.decode().lower(): value.decode() for name, value in request.headers}
        side = side_answer(path, raw, len(self.side_requests))
        if side is not None:
            self.side_requests.append(
                RecordedRequest(request.method.decode(), path, headers, raw, None)
            )
            return await self._send(conn, stream, side.status, JSON, [side.body])
        found = route(path)
        self.requests.append(
            RecordedRequest(request.method.decode(), path, headers, raw, found and found[0])
        )
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        self._notify()
        try:
            if self.hold is not None and self.hold(self):
                self.holding += 1
                released = self._released
                self._notify()
                await released.wait()
            if self.replies:
                reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
                return await self._send(
                    conn,
                    stream,
                    reply.status,
                    reply.content_type,
                    reply.chunks,
                    extra=reply.headers,
                )
            if found is None:
                body = b'{"error": {"message": "mock-llm: no such endpoint", "code": 404}}'
                return await self._send(conn, stream, 404, JSON, [body])
            wire_name, streamed = found
            try:
                payload = _decode.decode(raw) if raw else {}
            except msgspec.DecodeError:
                body = b'{"error": {"message": "mock-llm: body is not JSON", "code": 400}}'
                return await self._send(conn, stream, 400, JSON, [body])
            if streamed is None:
                streamed = bool(isinstance(payload, dict) and payload.get("stream"))
            if self.script.reject_tools and _has_tools(payload):
                message = f"{self.script.model} does not support tools"
                body = WIRES[wire_name].error_body(400, message, None)
                return await self._send(conn, stream, 400, JSON, [body])
            window = self.script.context_window
            tokens = request_tokens(raw)
            if window is not None and tokens > window:
                status, body, extra = overflow_error(wire_name, tokens, window)
                return await self._send(conn, stream, status, JSON, [body], extra=extra)
            turn = self._plan(wire_name, payload)
            if window is not None:
                usage = msgspec.structs.replace(turn.usage, input=tokens)
                turn = msgspec.structs.replace(turn, usage=usage)
            return await self._answer(conn, stream, WIRES[wire_name], turn, streamed, payload)
        finally:
            self.active -= 1
            self._notify()

    async def _answer(
        self,
        conn: h11.Connection,
        stream: trio.SocketStream,
        wire: Wire,
        turn: Turn,
        streamed: bool,
        payload: Any = None,
    ) -> bool:
        fault = turn.fault or Fault()
        if fault.wires and wire.name not in fault.wires:
            fault = Fault()
        if fault.drop_before_response:
            raise _Gone
        if turn.delay:
            await trio.sleep(turn.delay)
        if fault.status is not None:
            extra = {**wire.error_headers(fault.status), **fault.headers}
            if fault.retry_after is not None:
                extra["retry-after"] = f"{fault.retry_after:g}"
            body = wire.error_body(fault.status, fault.message, fault.retry_after)
            return await self._send(conn, stream, fault.status, JSON, [body], extra=extra)
        answer = make_answer(
            turn, len(self.requests), self.script.model, self.script.delta_size, payload
        )
        if streamed:
            frames = wire.stream(answer)
            return await self._send(
                conn,
                stream,
                200,
                wire.stream_content_type,
                frames,
                fault=fault,
                error_frame=wire.error_event(fault.message, fault.error_after or 0),
                event_delay=turn.event_delay,
            )
        return await self._send(
            conn, stream, 200, JSON, [wire.complete(answer)], fault=fault, length=True
        )

    async def _send(
        self,
        conn: h11.Connection,
        stream: trio.SocketStream,
        status: int,
        content_type: str,
        chunks: list[bytes],
        *,
        extra: dict[str, str] | None = None,
        fault: Fault | None = None,
        error_frame: bytes = b"",
        event_delay: float = 0.0,
        length: bool = False,
    ) -> bool:
        """Write one response while watching for the client going away."""
        headers = [("content-type", content_type), ("cache-control", "no-cache")]
        if length or content_type not in (SSE, EVENT_STREAM):
            headers.append(("content-length", str(sum(map(len, chunks)))))
        headers += list((extra or {}).items())
        fault = fault or Fault()
        gone = False

        completed = False

        async def watch(scope: trio.CancelScope) -> None:
            nonlocal gone
            try:
                data = await stream.receive_some(65536)
            except trio.ClosedResourceError:
                return  # we closed it ourselves (a scripted drop)
            except trio.BrokenResourceError:
                data = b""  # a reset: the client closed with our data unread
            if data:
                conn.receive_data(data)  # the next request, kept for the next cycle
                return
            gone = True
            scope.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, nursery.cancel_scope)
            try:
                await stream.send_all(conn.send(h11.Response(status_code=status, headers=headers)))
                completed = await self._body(conn, stream, chunks, fault, error_frame, event_delay)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                gone = True
            nursery.cancel_scope.cancel()
        if gone:
            self.disconnects += 1
            self._notify()
            return False
        return completed

    async def _body(
        self,
        conn: h11.Connection,
        stream: trio.SocketStream,
        chunks: list[bytes],
        fault: Fault,
        error_frame: bytes,
        event_delay: float,
    ) -> bool:
        """Write the chunks, applying the fault at its event index; False: we dropped it."""
        for index in range(len(chunks) + 1):
            if fault.stall_after == index:
                await trio.sleep(math.inf if fault.stall is None else fault.stall)
            if fault.drop_after == index:
                if len(chunks) == 1 and index == 0:  # a whole body: send half of it first
                    half = chunks[0][: len(chunks[0]) // 2]
                    await stream.send_all(conn.send(h11.Data(data=half)))
                await stream.aclose()
                return False
            if fault.error_after == index:
                await stream.send_all(conn.send(h11.Data(data=error_frame)))
                break
            if index == len(chunks):
                break
            if event_delay and index:
                await trio.sleep(event_delay)
            await stream.send_all(conn.send(h11.Data(data=chunks[index])))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        return True


@asynccontextmanager
async def serve_mock_llm(
    script: Script | None = None,
    *,
    replies: list[Reply] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> AsyncIterator[MockLLMServer]:
    """Run a mock provider for the duration of the block::

    async with serve_mock_llm(script) as server:
        endpoint = endpoint("anthropic", server.base_url)
    """
    server = MockLLMServer(script or Script(), replies)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, server.handle, port, host=host))
        server.host = host
        server.port = listeners[0].socket.getsockname()[1]
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()
