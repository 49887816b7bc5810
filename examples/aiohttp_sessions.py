"""An aiohttp service in front of a running ``troupe serve``: one session per request,
its events as Server-Sent Events, steering, approvals and abort, all over Troupe's
WebSocket client (the same client trio programs use).

    troupe serve &
    TROUPE_URL=ws://127.0.0.1:7707/ TROUPE_TOKEN=... python examples/aiohttp_sessions.py

The sessions live in the server: stopping this service, or a client dropping its
event stream, cancels nothing. Each event stream has a connection of its own, so
it ends when its HTTP client leaves; the requests share one connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from aiohttp import web

from protocol.client import RequestError, TroupeClient, connect
from protocol.wire import (
    AbortSession,
    CreateSession,
    GetSession,
    ResolveApproval,
    SteerSession,
    SubmitInput,
    SubscribeSession,
)

STATUS_OF_CODE = {"not_found": 404, "invalid_request": 400, "session_closed": 409}
SERVER = web.AppKey("server", tuple)
CLIENT = web.AppKey("client", TroupeClient)


async def troupe_connection(app: web.Application) -> AsyncIterator[None]:
    """One WebSocket connection for the app's requests, open while the app runs."""
    async with connect(*app[SERVER]) as client:
        app[CLIENT] = client
        yield


@web.middleware
async def request_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        return await handler(request)
    except RequestError as error:
        body = {"code": error.code, "message": error.error.message}
        return web.json_response(body, status=STATUS_OF_CODE.get(error.code, 502))


async def read_json(request: web.Request, *fields: str) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or any(field not in body for field in fields):
        raise web.HTTPUnprocessableEntity(text=f"expected a JSON object with {list(fields)}")
    return body


async def start_session(request: web.Request) -> web.Response:
    text = (await read_json(request, "text"))["text"]
    client = request.app[CLIENT]
    session = (await client.request(CreateSession)).session.session_id
    await client.request(SubmitInput, session=session, text=str(text))
    body = {"session": session, "events": f"/sessions/{session}/events"}
    return web.json_response(body, status=201)


async def describe_session(request: web.Request) -> web.Response:
    detail = await request.app[CLIENT].request(GetSession, session=request.match_info["session"])
    return web.json_response(
        {"session": msgspec.to_builtins(detail.session), "pending": detail.pending_approvals}
    )


async def session_events(request: web.Request) -> web.StreamResponse:
    """Server-Sent Events: ``id`` is the event's sequence number, ``event`` its kind."""
    session = request.match_info["session"]
    cursor = int(request.headers.get("Last-Event-ID", request.query.get("after_seq", "0")))
    async with connect(*request.app[SERVER]) as watcher:
        await watcher.request(SubscribeSession, session=session, after_seq=cursor)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        async for event in watcher.events():
            body = {"session_id": event.session_id, "seq": event.seq, "kind": event.kind,
                    "data": event.data}  # fmt: skip
            await response.write(
                b"id: %d\nevent: %s\ndata: %s\n\n"
                % (event.seq, event.kind.encode(), msgspec.json.encode(body))
            )
        return response


async def steer(request: web.Request) -> web.Response:
    text = (await read_json(request, "text"))["text"]
    session = request.match_info["session"]
    await request.app[CLIENT].request(SteerSession, session=session, text=str(text))
    return web.json_response({"accepted": True}, status=202)


async def answer_approval(request: web.Request) -> web.Response:
    decision = await read_json(request, "approved")
    await request.app[CLIENT].request(
        ResolveApproval,
        session=request.match_info["session"],
        request_id=request.match_info["request_id"],
        approved=bool(decision["approved"]),
        message=decision.get("message"),
    )
    return web.json_response({"answered": True})


async def abort(request: web.Request) -> web.Response:
    session = request.match_info["session"]
    await request.app[CLIENT].request(AbortSession, session=session, reason="aborted over HTTP")
    return web.json_response({"aborted": True})


def make_app(url: str, token: str | None) -> web.Application:
    app = web.Application(middlewares=[request_errors])
    app[SERVER] = (url, token)
    app.cleanup_ctx.append(troupe_connection)
    app.router.add_post("/sessions", start_session)
    app.router.add_get("/sessions/{session}", describe_session)
    app.router.add_get("/sessions/{session}/events", session_events)
    app.router.add_post("/sessions/{session}/steer", steer)
    app.router.add_post("/sessions/{session}/approvals/{request_id}", answer_approval)
    app.router.add_post("/sessions/{session}/abort", abort)
    return app


async def serve(url: str, token: str | None, host: str, port: int) -> None:
    """Serve until SIGINT or SIGTERM, printing the address (``--port 0`` picks one)."""
    # handler_cancellation: a client that leaves its event stream ends the handler,
    # and with it the stream's WebSocket connection (never the session).
    runner = web.AppRunner(make_app(url, token), handler_cancellation=True)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        print(f"serving on http://{bound_host}:{bound_port}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    url = os.environ.get("TROUPE_URL", "ws://127.0.0.1:7707/")
    asyncio.run(serve(url, os.environ.get("TROUPE_TOKEN"), args.host, args.port))


if __name__ == "__main__":
    main()
