"""Following a session from the terminal: events out, typed lines in.

Shared by ``troupe run`` and ``attach``. A typed line starts a new input when the
session is idle and steers it while it works; a line containing "stop" interrupts
it once the current step is done (the session stays open); while an approval
request is open, the next line answers it (yes, always, rule where the request
offers a wider rule, no, or a reason to say no),
and "stop" interrupts the run instead. An input that ends while background
subagents still work does not end ``troupe run``: it follows on until their
results have come back as follow-up inputs and been answered.

Events are read through their ``kind`` and ``data`` only, so the follower works
with any event vocabulary the server sends.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
import trio

from actors.commands.errors import EXIT_ERROR, EXIT_OK, EXIT_TURN_LIMIT
from actors.commands.extend_prompt import extend_amount, extend_question
from actors.commands.render import TextRenderer, approval_prompt, offered_rule
from actors.commands.render_calls import dollars
from protocol.client import RequestError, TroupeClient
from protocol.events import (
    AgenticEndEvent,
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantTextEndEvent,
    ErrorEvent,
    EventData,
    ProcessingEndEvent,
    SessionEndEvent,
    TurnLimitEvent,
    UserInputEvent,
)
from protocol.session import Spend
from protocol.wire import (
    Event,
    ExtendSessionLimit,
    InterruptSession,
    ResolveApproval,
    SteerSession,
    SubmitInput,
    SubscribeSession,
)

OutputFormat = Literal["text", "json", "stream-json"]
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens",
                "cache_read_tokens", "cache_write_tokens")  # fmt: skip


@dataclass
class Outcome:
    """What the input came to, for the exit code and the result object."""

    session_id: str
    exit_code: int = EXIT_OK
    status: str = "done"
    result: str = ""
    error: str | None = None
    iterations: int = 0
    events: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = 0.0
    """The model calls' cost at list prices; None once a call's price is unknown."""
    started: float = field(default_factory=time.monotonic)
    stopped_by_user: bool = False
    runtime: str = ""
    """Where the session ran: ``embedded`` or the server's URL."""
    pending_approvals: list[ApprovalRequestEvent] = field(default_factory=list)
    spend: Spend | None = None
    """The session's cost ledger at the end of the input (subagents included)."""

    def status_line(self) -> str:
        """The run's last line at a terminal: how it ended, turns, tokens, cost, time."""
        mark = "✓" if self.exit_code == EXIT_OK else "✗"
        head = f"{mark} {self.status}" + (f": {self.error}" if self.error else "")
        parts = [head, f"{self.iterations} turn{'s' if self.iterations != 1 else ''}"]
        if self.usage:
            tokens_in = self.usage.get("input_tokens", 0)
            parts.append(f"{tokens_in} in / {self.usage.get('output_tokens', 0)} out tokens")
        if self.cost_usd:
            parts.append(dollars(self.cost_usd))
        parts.append(f"{time.monotonic() - self.started:.1f}s")
        return " · ".join(parts)

    def summary(self) -> dict[str, Any]:
        """The final result object of ``--output-format json`` and ``stream-json``.

        ``cost_usd`` is the sum of the model calls' costs at the catalog's list
        prices; null when a model the catalog does not price answered (no guess)."""
        return {
            "type": "result",
            "status": self.status,
            "is_error": self.exit_code not in (EXIT_OK,),
            "exit_code": self.exit_code,
            "result": self.result,
            "error": self.error,
            "session_id": self.session_id,
            "runtime": self.runtime,
            "num_turns": self.iterations,
            "iterations": self.iterations,
            "events": self.events,
            "usage": self.usage,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
            "spend": None if self.spend is None else msgspec.to_builtins(self.spend),
            "duration_ms": round((time.monotonic() - self.started) * 1000),
        }


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
        self.state = "idle"
        """The session's state as the events tell it (``processing`` once we submit)."""
        self.more_input = False
        """True while an input stream may still send lines: the follower then keeps
        going past the end of an input, until the stream closes."""
        self.offer_extend = False
        """At a terminal (``troupe run``): when an input stops at a limit, ask whether
        to raise it and continue that input instead of ending."""
        self._limit: str | None = None
        """The limit the input stopped at, while that question waits for its answer."""
        self.known_until = 0
        """Events up to this sequence number are history replayed on subscribe: the
        state they show is over (set with ``state`` from the session's summary)."""
        self._finished = trio.Event()
        self._idle = trio.Event()
        """Set whenever the session is not working on an input (for the
        interactive conversation, which prompts again then)."""
        self._idle.set()

    async def run(
        self,
        task: str | None,
        after_seq: int = 0,
        interactive: bool = False,
        emit_result: bool = True,
    ) -> Outcome:
        await self.client.request(SubscribeSession, session=self.session, after_seq=after_seq)
        if task is not None:
            await self.submit(task)
        try:
            async with trio.open_nursery() as nursery:
                if interactive:
                    nursery.start_soon(self._read_lines)
                nursery.start_soon(self._follow)
                await self._finished.wait()
                nursery.cancel_scope.cancel()
        finally:
            self.renderer.close()
        if emit_result:
            self.emit_result()
        return self.outcome

    def emit_result(self) -> None:
        if self.output_format in ("json", "stream-json"):
            print(json.dumps(self.outcome.summary()), flush=True)

    def finish(self) -> None:
        self._finished.set()
        self._idle.set()

    @property
    def finished(self) -> bool:
        """The session ended or the connection was lost."""
        return self._finished.is_set()

    async def wait_idle(self) -> None:
        """Until the session is done with its input (or the follower finished)."""
        await self._idle.wait()

    async def follow(self) -> None:
        """Show and account every event of this session until it ends (for a caller
        that runs its own loop around it, as the interactive conversation does)."""
        await self._follow()

    def input_closed(self) -> None:
        """The input stream ended: finish now if nothing is running."""
        self.more_input = False
        if self.state != "processing":
            self.finish()

    async def _follow(self) -> None:
        outcome = self.outcome
        async for event in self.client.events():
            if self.session not in (event.session, event.session_id):
                continue  # a session this client followed before (a /clear)
            outcome.events += 1
            try:
                data = event.body()
            except msgspec.ValidationError as error:  # a server that breaks its schema
                self.renderer.note(f"[unreadable {event.kind} event: {error}]")
                data = None
            self._show(event, data)
            self._account(event, data)
            ended = event.kind in self.until and not self.more_input
            if ended and isinstance(data, ProcessingEndEvent) and data.background_agents:
                continue  # their results come back as follow-up inputs: wait for them
            if event.kind == "session_end" or ended:
                if event.kind != "session_end" and self._limit is not None:
                    self.renderer.note(extend_question(self._limit))
                    continue
                self.finish()
                return
        outcome.status = "disconnected"
        outcome.exit_code = EXIT_ERROR
        outcome.error = "lost the connection to the server"
        self.finish()

    def _show(self, event: Event, data: EventData | None) -> None:
        if self.output_format == "text":
            self.renderer.show(data)
        elif self.output_format == "stream-json":
            print(msgspec.json.encode(event).decode(), flush=True)

    def _account(self, event: Event, data: EventData | None) -> None:
        outcome = self.outcome
        if event.seq > self.known_until:
            self._track_state(data)
        match data:
            case AssistantTextEndEvent():
                outcome.iterations += 1
                if data.text:
                    outcome.result = data.text
                _add_usage(outcome.usage, msgspec.to_builtins(data.usage))
                if outcome.cost_usd is not None:
                    outcome.cost_usd = (
                        None if data.cost_usd is None else outcome.cost_usd + data.cost_usd
                    )
            case AgenticEndEvent():
                outcome.result = data.result
            case ProcessingEndEvent(spend=spend) if spend is not None:
                outcome.spend = spend
            case TurnLimitEvent() if not outcome.stopped_by_user:
                outcome.status, outcome.exit_code = "turn_limit", EXIT_TURN_LIMIT
                if self.offer_extend and event.seq > self.known_until:
                    self._limit = data.limit
            case ErrorEvent():
                outcome.status, outcome.exit_code = "error", EXIT_ERROR
                outcome.error = data.message or data.error_type or "error"
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

    def _track_state(self, data: EventData | None) -> None:
        match data:
            case UserInputEvent():
                self._set_state("processing")
            case ProcessingEndEvent():
                self._set_state(data.state)
            case SessionEndEvent():
                self._set_state("closed")
            case _:
                pass

    def mark_idle(self) -> None:
        """Stop waiting for the current input (the user gave up on it)."""
        self._set_state("idle")

    def _set_state(self, state: str) -> None:
        self.state = state
        if state == "processing":
            if self._idle.is_set():
                self._idle = trio.Event()
        else:
            self._idle.set()

    async def _read_lines(self) -> None:
        stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
        buffer = b""
        async with stream:
            while True:
                chunk = await stream.receive_some()
                if not chunk:
                    if self._limit is not None:  # no answer will come: the run ends
                        self.finish()
                    return
                buffer += chunk
                while b"\n" in buffer:
                    raw, buffer = buffer.split(b"\n", 1)
                    await self.typed(raw.decode(errors="replace").strip())

    async def submit(self, text: str) -> None:
        """A new input: it starts now when the session is idle (queued otherwise)."""
        self._set_state("processing")
        try:
            await self.client.request(SubmitInput, session=self.session, text=text)
        except BaseException:
            self._set_state("idle")  # nothing started: nobody waits for its end
            raise

    async def send(self, text: str) -> str:
        """Submit when idle, steer while working; returns which it did."""
        if self.state == "processing":
            await self.client.request(SteerSession, session=self.session, text=text)
            return "steered"
        await self.submit(text)
        return "submitted"

    async def typed(self, line: str) -> None:
        """One line from the user: an approval answer, "stop", or a message."""
        if self._limit is not None:
            await self._answer_extend(line, self._limit)
            return
        if not line:
            return
        try:
            if is_stop(line) and self.outcome.pending_approvals:
                self.outcome.pending_approvals.clear()
                self.outcome.stopped_by_user = True
                self.outcome.status = "stopped"
                await self.interrupt(immediate=True)  # withdraws the open request
                self.renderer.note("[stopped]")
            elif self.outcome.pending_approvals:
                request = self.outcome.pending_approvals[0]
                try:
                    answer = approval_answer(line, request.details)
                except UnofferedAnswer as refused:
                    self.renderer.note(str(refused))  # still open: the next line answers
                    return
                self.outcome.pending_approvals.pop(0)
                await self.client.request(
                    ResolveApproval, session=self.session, request_id=request.request_id,
                    **answer,
                )  # fmt: skip
            elif is_stop(line) and self.state == "processing":
                await self._stop_after_step()
            elif await self.send(line) == "steered":
                self.renderer.note(f"[steering queued] {line}")
        except RequestError as error:
            self.renderer.note(f"[refused] {error}")

    async def _answer_extend(self, line: str, limit: str) -> None:
        """The answer to the extend question: raise the limit and follow the same
        input on, or end the run (it stopped at the limit)."""
        self._limit = None
        by = extend_amount(line, limit)
        if by is None:
            self.finish()
            return
        try:
            await self.client.request(ExtendSessionLimit, session=self.session, by=by)
        except RequestError as error:
            self.renderer.note(f"[refused] {error}")
            self.finish()
            return
        self._set_state("processing")
        self.outcome.status, self.outcome.exit_code = "done", EXIT_OK
        self.renderer.note(f"[{limit} raised by {by:,}; continuing]")

    async def interrupt(self, immediate: bool = True) -> None:
        """Stop the current work, keep the session (best effort, bounded: a session
        that is idle by now refuses, which is fine)."""
        with trio.move_on_after(3), contextlib.suppress(RequestError):
            await self.client.request(InterruptSession, session=self.session, immediate=immediate)

    async def _stop_after_step(self) -> None:
        """Interrupt, not abort: the current step finishes, the session stays open."""
        self.outcome.stopped_by_user = True
        self.outcome.status = "stopped"
        await self.client.request(InterruptSession, session=self.session, immediate=False)
        self.renderer.note("[stopping after the current step]")


_STOP = re.compile(r"(?<![\w/])/?stop\b", re.IGNORECASE)


def is_stop(line: str) -> bool:
    """ "stop" as a word, or ``/stop``: "please stop" stops, "add a stopwatch" does not."""
    return _STOP.search(line) is not None


class UnofferedAnswer(ValueError):
    """A typed answer the request does not offer (``rule`` where no wider rule is
    named): the request stays open and the user is told so in one line."""


NO_RULE = "[no wider rule is offered for this request: answer yes, always, no, or a reason]"


def approval_answer(line: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A typed answer: yes/y approves once, always/a approves exactly this call for
    the session, rule/r approves the wider rule the request names
    (``details["rule"]``), no/n denies, anything else denies with the text as the
    message the model reads. ``rule`` where the request names no wider rule (an
    admin line) raises :class:`UnofferedAnswer` rather than granting more or
    denying by surprise. An answer the request itself offers (an object in
    ``details["answers"]`` with the word to type and the ``scope`` it grants) is
    taken as it says, so a new kind of answer needs no change here."""
    word = line.strip().lower()
    for offered in (details or {}).get("answers") or ():
        if isinstance(offered, dict) and word in _words_of(offered):
            answer: dict[str, Any] = {"approved": bool(offered.get("approved", True))}
            if isinstance(offered.get("scope"), str):
                answer["scope"] = offered["scope"]
            return answer
    if word in ("y", "yes"):
        return {"approved": True}
    if word in ("a", "always"):
        return {"approved": True, "scope": "command"}
    if word in ("r", "rule"):
        if offered_rule(details or {}) is None:
            raise UnofferedAnswer(NO_RULE)
        return {"approved": True, "scope": "rule"}
    if word in ("n", "no"):
        return {"approved": False}
    return {"approved": False, "message": line.strip()}


def _words_of(offered: dict[str, Any]) -> set[str]:
    words = {offered.get(key) for key in ("answer", "key", "label")}
    return {word.strip().lower() for word in words if isinstance(word, str) and word.strip()}


def _add_usage(total: dict[str, int], usage: dict[str, Any]) -> None:
    for name in USAGE_FIELDS:
        value = usage.get(name)
        if isinstance(value, int):
            total[name] = total.get(name, 0) + value


__all__ = [
    "Follower",
    "Outcome",
    "OutputFormat",
    "UnofferedAnswer",
    "approval_answer",
    "approval_prompt",
    "is_stop",
]
