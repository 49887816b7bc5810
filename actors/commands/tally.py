"""What a follower makes of a session's events, without an event loop: what it
shows (text or stream-json), what the input came to (:class:`Outcome`: result,
usage, cost, exit code) and the session's state as the events tell it.

Shared by the trio follower of ``troupe run``, ``attach`` and the conversation
(:class:`actors.commands.interact.Follower`) and the blocking one of ``troupe run``
through a running server (:mod:`actors.commands.run_direct`), so both read events
the same way. Events are read through their ``kind`` and ``data`` only, so a
follower works with any event vocabulary the server sends.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from actors.commands.errors import EXIT_ERROR, EXIT_OK, EXIT_TURN_LIMIT
from actors.commands.extend_prompt import extend_question
from actors.commands.render_calls import dollars
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
from protocol.wire import Event

if TYPE_CHECKING:
    from actors.commands.render import TextRenderer

OutputFormat = Literal["text", "json", "stream-json"]
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens",
                "cache_read_tokens", "cache_write_tokens")  # fmt: skip


class Outcome(msgspec.Struct):
    """What the input came to, for the exit code and the result object."""

    session_id: str
    exit_code: int = EXIT_OK
    status: str = "done"
    result: str = ""
    error: str | None = None
    iterations: int = 0
    events: int = 0
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    cost_usd: float | None = 0.0
    """The model calls' cost at list prices; None once a call's price is unknown."""
    started: float = msgspec.field(default_factory=time.monotonic)
    stopped_by_user: bool = False
    runtime: str = ""
    """Where the session ran: ``embedded`` or the server's URL."""
    pending_approvals: list[ApprovalRequestEvent] = msgspec.field(default_factory=list)
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


class EventTally:
    """Shows and accounts one session's events (see the module doc)."""

    def __init__(
        self,
        session: str,
        output_format: OutputFormat = "text",
        until: tuple[str, ...] = ("processing_end", "session_end"),
    ) -> None:
        self.session = session
        self.output_format = output_format
        self.until = until
        self._renderer: TextRenderer | None = None
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

    @property
    def renderer(self) -> TextRenderer:
        """The terminal's renderer, made when first used: with json output a run
        may never draw a line, and then neither the renderer nor its diffs are
        loaded (issue 36)."""
        if self._renderer is None:
            from actors.commands.render import TextRenderer

            self._renderer = TextRenderer()
        return self._renderer

    def close_renderer(self) -> None:
        """Take the spinner off the screen, if anything was drawn."""
        if self._renderer is not None:
            self._renderer.close()

    def emit_result(self) -> None:
        if self.output_format in ("json", "stream-json"):
            print(json.dumps(self.outcome.summary()), flush=True)

    def take(self, event: Event) -> bool:
        """Show and account one event; True once following should stop (the
        session ended, or its input did and nothing more will come)."""
        if self.session not in (event.session, event.session_id):
            return False  # a session this client followed before (a /clear)
        self.outcome.events += 1
        try:
            data = event.body()
        except msgspec.ValidationError as error:  # a server that breaks its schema
            self.renderer.note(f"[unreadable {event.kind} event: {error}]")
            data = None
        self._show(event, data)
        self._account(event, data)
        ended = event.kind in self.until and not self.more_input
        if ended and isinstance(data, ProcessingEndEvent) and data.background_agents:
            return False  # their results come back as follow-up inputs: wait for them
        if event.kind == "session_end" or ended:
            if event.kind != "session_end" and self._limit is not None:
                self.renderer.note(extend_question(self._limit))
                return False
            return True
        return False

    def disconnected(self) -> None:
        """The connection ended before the session did."""
        self.outcome.status = "disconnected"
        self.outcome.exit_code = EXIT_ERROR
        self.outcome.error = "lost the connection to the server"

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


def _add_usage(total: dict[str, int], usage: dict[str, Any]) -> None:
    for name in USAGE_FIELDS:
        value = usage.get(name)
        if isinstance(value, int):
            total[name] = total.get(name, 0) + value
