"""Troupe sessions inside a trio web app (Quart-Trio under hypercorn): one session per
request, its events as Server-Sent Events, steering, approvals and abort.

    TROUPE_BASE_URL=http://127.0.0.1:8001/v1 \\
        hypercorn --worker-class trio examples.quart_trio_sessions:app

Everything runs on one trio loop: the sessions start in the app's own nursery
(``run_sessions``, the nursery embedding) before it serves, and stop through the
shutdown ladder after it has served, so no command the agents started outlives the
app. A client that drops its event stream cancels nothing; only ``/abort`` stops it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import trio
from quart import Response, jsonify, request
from quart_trio import QuartTrio
from werkzeug.exceptions import UnprocessableEntity

from actors.embed import HostConfig, Sessions, run_sessions
from actors.server.models import ModelSettings
from protocol.client import RequestError
from protocol.wire import (
    AbortSession,
    CreateSession,
    GetSession,
    ResolveApproval,
    SteerSession,
    SubmitInput,
)

STATUS_OF_CODE = {"not_found": 404, "invalid_request": 400, "session_closed": 409}

app = QuartTrio(__name__)


def config_from_environment() -> HostConfig:
    """``TROUPE_DATA_DIR``, ``TROUPE_WORKDIR``, ``TROUPE_PROFILE``, ``TROUPE_BASE_URL``,
    ``TROUPE_API_KEY`` (else the provider's own variables)."""
    return HostConfig(
        data_dir=Path(os.environ.get("TROUPE_DATA_DIR", "troupe-data")),
        working_dir=Path(os.environ.get("TROUPE_WORKDIR", ".")),
        models=ModelSettings(
            os.environ.get("TROUPE_PROFILE", "openai"),
            os.environ.get("TROUPE_BASE_URL"),
            os.environ.get("TROUPE_API_KEY"),
        ),
    )


class Troupe:
    """Where the app keeps its sessions while it serves."""

    sessions: Sessions
    stopped: trio.Event


troupe = Troupe()


@app.before_serving
async def start_sessions() -> None:
    troupe.stopped = trio.Event()

    async def host(task_status: trio.TaskStatus[Sessions] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await run_sessions(config_from_environment(), task_status=task_status)
        finally:
            troupe.stopped.set()

    troupe.sessions = await app.nursery.start(host)


@app.after_serving
async def stop_sessions() -> None:
    troupe.sessions.stop()  # the shutdown ladder: commands are ended, events flushed
    with trio.CancelScope(shield=True):
        await troupe.stopped.wait()


@app.errorhandler(RequestError)
async def request_error(error: RequestError) -> Any:
    body = {"code": error.code, "message": error.error.message}
    return jsonify(body), STATUS_OF_CODE.get(error.code, 502)


async def json_fields(*fields: str) -> dict[str, Any]:
    body = await request.get_json(silent=True)
    if not isinstance(body, dict) or any(field not in body for field in fields):
        raise UnprocessableEntity(f"expected a JSON object with {list(fields)}")
    return body


@app.post("/sessions")
async def start_session() -> Any:
    text = (await json_fields("text"))["text"]
    session = (await troupe.sessions.request(CreateSession)).session.session_id
    await troupe.sessions.request(SubmitInput, session=session, text=str(text))
    return {"session": session, "events": f"/sessions/{session}/events"}, 201


@app.get("/sessions/<session>")
async def describe_session(session: str) -> Any:
    detail = await troupe.sessions.request(GetSession, session=session)
    return {"session": msgspec.to_builtins(detail.session), "pending": detail.pending_approvals}


@app.get("/sessions/<session>/events")
async def session_events(session: str) -> Response:
    """Server-Sent Events: ``id`` is the event's sequence number, ``event`` its kind."""
    cursor = int(request.headers.get("Last-Event-ID", request.args.get("after_seq", "0")))
    events = await troupe.sessions.events(session, after_seq=cursor)  # 404 before streaming

    async def stream() -> AsyncIterator[bytes]:
        async with events:  # leaving (the client went away) only unsubscribes
            async for event in events:
                body = {"session_id": event.session_id, "seq": event.seq, "kind": event.kind,
                        "data": event.data}  # fmt: skip
                yield b"id: %d\nevent: %s\ndata: %s\n\n" % (
                    event.seq,
                    event.kind.encode(),
                    msgspec.json.encode(body),
                )

    response = Response(stream(), content_type="text/event-stream")
    response.timeout = None  # an event stream lasts as long as its session
    return response


@app.post("/sessions/<session>/steer")
async def steer(session: str) -> Any:
    text = (await json_fields("text"))["text"]
    await troupe.sessions.request(SteerSession, session=session, text=str(text))
    return {"accepted": True}, 202


@app.post("/sessions/<session>/approvals/<request_id>")
async def answer_approval(session: str, request_id: str) -> Any:
    decision = await json_fields("approved")
    await troupe.sessions.request(
        ResolveApproval,
        session=session,
        request_id=request_id,
        approved=bool(decision["approved"]),
        message=decision.get("message"),
    )
    return {"answered": True}


@app.post("/sessions/<session>/abort")
async def abort(session: str) -> Any:
    await troupe.sessions.request(AbortSession, session=session, reason="aborted over HTTP")
    return {"aborted": True}
