"""Approval requests of one session: the session raises them, any client answers.

The tool round asks when the policy says ``ask``. The request is a durable
session event (``approval_request``), stored, replayed, and sent again to a
client that subscribes while it is pending; the answer is another durable event
(``approval_resolved``) saying who answered. Nobody answering within the policy's
timeout is a denial; cancelling the asker (an interrupt) withdraws the request.
Answers arrive as :class:`~protocol.session.AnswerApproval` messages in the
session's own mailbox; the server only routes them.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import msgspec
import trio

from actors.kernel import Rejection
from protocol.events import ApprovalRequestEvent, ApprovalResolvedEvent, EventData, SessionEvent
from protocol.session import ApprovalScope


class ApprovalNotFound(Rejection):
    code = "not_found"


class Answer(msgspec.Struct, frozen=True):
    """What came back for one request."""

    approved: bool
    message: str | None = None
    scope: ApprovalScope = "once"
    by: str = "client"


class Pending(msgspec.Struct):
    """One open request and the event its requester waits on."""

    event: SessionEvent
    done: trio.Event = msgspec.field(default_factory=trio.Event)
    answer: Answer | None = None


Emit = Callable[[EventData], SessionEvent]
Waiting = Callable[[bool], None]
"""Told True when the session starts waiting for an answer, False when nothing
is waited for any more (the loop's ``waiting_approval`` state)."""


class Approvals:
    """The pending approval requests of one session."""

    def __init__(self, emit: Emit, waiting: Waiting | None = None) -> None:
        self._emit = emit
        self._waiting = waiting
        self._waiters = 0
        """How many tool calls wait for an answer now (parallel calls may)."""
        self.pending: dict[str, Pending] = {}
        self._reopened: dict[str, str] = {}
        """call id -> request id of requests open again after a restart."""
        self._answered: dict[str, Answer] = {}

    def reopen(self, event: SessionEvent, call_id: str) -> None:
        """A stored request nobody answered before the server stopped: pending
        again under its old id (clients see it as before), and the tool round's
        next ask for ``call_id`` waits on it instead of asking anew."""
        data = event.data
        assert isinstance(data, ApprovalRequestEvent)
        self.pending[data.request_id] = Pending(event)
        self._reopened[call_id] = data.request_id

    async def ask(
        self, action: str, subject: str, timeout_s: float = float("inf"), **details: Any
    ) -> Answer:
        """Ask the session's clients; the answer once one comes, a denial at the
        timeout. ``action`` is the kind of thing (``command``, ``write``),
        ``subject`` the thing itself (the command line)."""
        reopened = self._reopened.pop(str(details.get("call_id", "")), None)
        if reopened is not None and reopened in self.pending:
            request_id, pending = reopened, self.pending[reopened]
        elif reopened is not None:  # answered before the round came back to it
            return self._answered.pop(reopened)
        else:
            request_id = f"ap-{secrets.token_hex(4)}"
            event = self._emit(ApprovalRequestEvent(request_id, action, subject, details))
            pending = Pending(event)
            self.pending[request_id] = pending
        self._wait_begins()
        try:
            with trio.move_on_after(timeout_s):
                await pending.done.wait()
            if pending.answer is None:
                self._close(request_id, pending, "no answer in time", "timeout")
        finally:
            if pending.answer is None:
                self._close(request_id, pending, "withdrawn", "interrupt")
            self._wait_ends()
        assert pending.answer is not None
        return pending.answer

    def _wait_begins(self) -> None:
        self._waiters += 1
        if self._waiters == 1 and self._waiting is not None:
            self._waiting(True)

    def _wait_ends(self) -> None:
        self._waiters -= 1
        if self._waiters == 0 and self._waiting is not None:
            self._waiting(False)

    async def request(self, action: str, subject: str, **details: Any) -> tuple[bool, str | None]:
        """(approved, message): the simple form, waiting as long as it takes."""
        answer = await self.ask(action, subject, **details)
        return answer.approved, answer.message

    def resolve(
        self,
        request_id: str,
        approved: bool,
        message: str | None,
        scope: ApprovalScope = "once",
        by: str = "client",
    ) -> None:
        pending = self.pending.pop(request_id, None)
        if pending is None:
            raise ApprovalNotFound(f"no pending approval request {request_id}")
        pending.answer = Answer(approved, message, scope if approved else "once", by)
        self._emit(ApprovalResolvedEvent(request_id, approved, message, pending.answer.scope, by))
        pending.done.set()
        if request_id in self._reopened.values():  # the round has not come back yet
            self._answered[request_id] = pending.answer

    def _close(self, request_id: str, pending: Pending, message: str, by: str) -> None:
        self.pending.pop(request_id, None)
        pending.answer = Answer(False, message, by=by)
        self._emit(ApprovalResolvedEvent(request_id, False, message, by=by))

    def events(self) -> list[SessionEvent]:
        return [pending.event for pending in self.pending.values()]
