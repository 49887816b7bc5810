"""Troupe sessions inside a FastAPI service: one session per request, its events as
Server-Sent Events, steering, approvals and abort.

    TROUPE_BASE_URL=http://127.0.0.1:8001/v1 uvicorn examples.fastapi_sessions:app

The sessions run in process, on Troupe's trio runtime in a thread of its own
(``SessionHost``); the app's lifespan opens it and, when uvicorn stops, runs its
shutdown ladder, so no command the agents started outlives the service. A client
that drops its event stream cancels nothing: the session goes on, and the stream can
be picked up again from the last ``id`` (``Last-Event-ID``). Only ``/abort`` stops it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
from fastapi import FastAPI, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel

from actors.embed import HostConfig, SessionHost
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


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with SessionHost(config_from_environment()) as host:  # exit: the shutdown ladder
        app.state.troupe = host
        yield


app = FastAPI(title="Troupe sessions", lifespan=lifespan)


def troupe(request: Request) -> SessionHost:
    return request.app.state.troupe


@app.exception_handler(RequestError)
async def request_error(request: Request, error: RequestError) -> JSONResponse:
    status = STATUS_OF_CODE.get(error.code, 502)
    return JSONResponse({"code": error.code, "message": error.error.message}, status)


class Task(BaseModel):
    text: str


class Decision(BaseModel):
    approved: bool
    message: str | None = None


@app.post("/sessions", status_code=201)
async def start_session(task: Task, request: Request) -> dict[str, str]:
    """A new session working on ``text``; follow it at the returned ``events`` URL."""
    host = troupe(request)
    session = (await host.request(CreateSession)).session.session_id
    await host.request(SubmitInput, session=session, text=task.text)
    return {"session": session, "events": f"/sessions/{session}/events"}


@app.get("/sessions/{session}")
async def describe_session(session: str, request: Request) -> dict[str, Any]:
    detail = await troupe(request).request(GetSession, session=session)
    return {"session": msgspec.to_builtins(detail.session), "pending": detail.pending_approvals}


@app.get("/sessions/{session}/events")
async def session_events(
    session: str,
    request: Request,
    after_seq: int = 0,
    last_event_id: int | None = Header(default=None),
) -> StreamingResponse:
    """Server-Sent Events: ``id`` is the event's sequence number, ``event`` its kind."""
    host = troupe(request)
    await host.request(GetSession, session=session)  # an unknown session is a 404 here
    cursor = last_event_id if last_event_id is not None else after_seq

    async def stream() -> AsyncIterator[bytes]:
        async for event in host.events(session, after_seq=cursor):
            body = {"session_id": event.session_id, "seq": event.seq, "kind": event.kind,
                    "data": event.data}  # fmt: skip
            yield b"id: %d\nevent: %s\ndata: %s\n\n" % (
                event.seq,
                event.kind.encode(),
                msgspec.json.encode(body),
            )

    return StreamingResponse(stream(), media_type="text/event-stream")


@app.post("/sessions/{session}/steer", status_code=202)
async def steer(session: str, task: Task, request: Request) -> dict[str, bool]:
    """Inject ``text`` after the current tool round."""
    await troupe(request).request(SteerSession, session=session, text=task.text)
    return {"accepted": True}


@app.post("/sessions/{session}/approvals/{request_id}")
async def answer_approval(
    session: str, request_id: str, decision: Decision, request: Request
) -> dict[str, bool]:
    """Answer an ``approval_request`` event of the session."""
    await troupe(request).request(
        ResolveApproval,
        session=session,
        request_id=request_id,
        approved=decision.approved,
        message=decision.message,
    )
    return {"answered": True}


@app.post("/sessions/{session}/abort")
async def abort(session: str, request: Request) -> dict[str, bool]:
    """Stop the session now: its model stream is cancelled and its commands killed."""
    await troupe(request).request(AbortSession, session=session, reason="aborted over HTTP")
    return {"aborted": True}
