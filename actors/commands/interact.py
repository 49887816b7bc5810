"""Following a session from the terminal: events out, typed lines in.

Shared by ``troupe run``, ``attach`` and ``demo``. A typed line steers the agent; a
line containing "stop" interrupts it once the current step is done (the session
stays open); while an approval request
is open, the next line answers it (yes/no).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Literal

import msgspec
import trio

from actors.commands.common import EXIT_ERROR, EXIT_OK, EXIT_TURN_LIMIT
from actors.commands.render import TextRenderer, approval_prompt
from protocol.client import RequestError, TroupeClient
from protocol.events import (
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantTextEndEvent,
    ErrorEvent,
    EventData,
    SessionEndEvent,
    TurnLimitEvent,
)
from protocol.wire import (
    Event,
    InterruptSession,
    ResolveApproval,
    SteerSession,
    SubmitInput,
    SubscribeSession,
)

OutputFormat = Literal["text", "json", "stream-json"]


@dataclass
class Outcome:
    """What the input came to, for the exit code and the JSON summary."""

    session_id: str
    exit_code: int = EXIT_OK
    status: str = "done"
    result: str = ""
    iterations: int = 0
    events: int = 0
    stopped_by_user: bool = False
    pending_approvals: list[ApprovalRequestEvent] = field(default_factory=list)


class Follower:
    """Subscribes to a session, shows its events, and turns typed lines into requests."""

    def __init__(
        self,
        client: TroupeClient,
        session: str,
        output_format: OutputFormat = "text",
        until: tuple[str, ...] = ("processing_end", "session_end"),
    ) -> None:
        self.client = client
        self.session = session
        self.output_format = output_format
        self.until = until
        self.renderer = TextRenderer()
        self.outcome = Outcome(session)

    async def run(self, task: str | None, after_seq: int = 0, interactive: bool = False) -> Outcome:
        await self.client.request(SubscribeSession, session=self.session, after_seq=after_seq)
        if task is not None:
            await self.client.request(SubmitInput, session=self.session, text=task)
        async with trio.open_nursery() as nursery:
            if interactive:
                nursery.start_soon(self._read_lines)
            await self._follow()
            nursery.cancel_scope.cancel()
        if self.output_format == "json":
            print(json.dumps(self._summary()))
        elif self.output_format == "stream-json":
            print(json.dumps({"type": "result", **self._summary()}), flush=True)
        return self.outcome

    def _summary(self) -> dict:
        o = self.outcome
        return {
            "session_id": o.session_id, "status": o.status, "exit_code": o.exit_code,
            "result": o.result, "iterations": o.iterations, "events": o.events,
        }  # fmt: skip

    async def _follow(self) -> None:
        outcome = self.outcome
        async for event in self.client.events():
            outcome.events += 1
            try:
                data = event.body()
            except msgspec.ValidationError as error:  # a server that breaks its schema
                self.renderer.note(f"[unreadable {event.kind} event: {error}]")
                data = None
            self._show(event, data)
            self._account(data)
            if event.kind in self.until:
                return
        outcome.status = "disconnected"
        outcome.exit_code = EXIT_ERROR

    def _show(self, event: Event, data: EventData | None) -> None:
        if self.output_format == "text":
            self.renderer.show(data)
        elif self.output_format == "stream-json":
            print(msgspec.json.encode(event).decode(), flush=True)

    def _account(self, data: EventData | None) -> None:
        outcome = self.outcome
        match data:
            case AssistantTextEndEvent():
                outcome.iterations += 1
                outcome.result = data.text
            case TurnLimitEvent() if not outcome.stopped_by_user:
                outcome.status, outcome.exit_code = "turn_limit", EXIT_TURN_LIMIT
            case ErrorEvent():
                outcome.status, outcome.exit_code = "error", EXIT_ERROR
            case SessionEndEvent() if outcome.status == "done":
                outcome.status = "closed"
            case ApprovalRequestEvent():
                outcome.pending_approvals.append(data)
            case ApprovalResolvedEvent():
                outcome.pending_approvals = [
                    p for p in outcome.pending_approvals if p.request_id != data.request_id
                ]
            case _:
                pass

    async def _read_lines(self) -> None:
        stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
        buffer = b""
        async with stream:
            while True:
                chunk = await stream.receive_some()
                if not chunk:
                    return
                buffer += chunk
                while b"\n" in buffer:
                    raw, buffer = buffer.split(b"\n", 1)
                    await self.typed(raw.decode(errors="replace").strip())

    async def typed(self, line: str) -> None:
        """One line from the user: an approval answer, "stop", or steering."""
        if not line:
            return
        try:
            if self.outcome.pending_approvals:
                request = self.outcome.pending_approvals.pop(0)
                approved = line.lower() in ("y", "yes")
                await self.client.request(
                    ResolveApproval, session=self.session,
                    request_id=request.request_id, approved=approved,
                )  # fmt: skip
            elif "stop" in line.lower():
                await self._stop_after_step()
            else:
                await self.client.request(SteerSession, session=self.session, text=line)
                self.renderer.note(f"[steering queued] {line}")
        except RequestError as error:
            self.renderer.note(f"[refused] {error}")

    async def _stop_after_step(self) -> None:
        """Interrupt, not abort: the current step finishes, the session stays open."""
        self.outcome.stopped_by_user = True
        self.outcome.status = "stopped"
        await self.client.request(InterruptSession, session=self.session, immediate=False)
        self.renderer.note("[stopping after the current step]")


__all__ = ["Follower", "Outcome", "OutputFormat", "approval_prompt"]
