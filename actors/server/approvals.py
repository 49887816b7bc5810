"""Approval requests: the mechanism that lets a client say yes or no to an action.

A policy (to come) calls :meth:`Approvals.request` and waits for the decision. The
request is a durable session event (``approval_request``), so it is stored,
replayed, and sent again to a client that resubscribes while it is pending; the
answer is another durable event (``approval_resolved``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import trio

from actors.kernel import Rejection
from protocol.events import ApprovalRequestEvent, ApprovalResolvedEvent, EventData, SessionEvent


class ApprovalNotFound(Rejection):
    code = "not_found"


@dataclass
class Pending:
    """One open request and the event its requester waits on."""

    event: SessionEvent
    done: trio.Event = field(default_factory=trio.Event)
    approved: bool = False
    message: str | None = None
    scope: ApprovalScope = "once"


ApprovalScope = Literal["once", "session"]
Emit = Callable[[EventData], SessionEvent]


class Approvals:
    """The pending approval requests of one session."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self.pending: dict[str, Pending] = {}

    async def request(self, action: str, subject: str, **details: Any) -> tuple[bool, str | None]:
        """Ask the session's clients; returns (approved, message) once one answers.

        ``action`` is what kind of thing needs approval (``command``, ``write``),
        ``subject`` the thing itself (the command line). Cancelling the caller
        withdraws the request."""
        request_id = f"ap-{secrets.token_hex(4)}"
        event = self._emit(ApprovalRequestEvent(request_id, action, subject, details))
        pending = Pending(event)
        self.pending[request_id] = pending
        try:
            await pending.done.wait()
        finally:
            if self.pending.pop(request_id, None) is not None and not pending.done.is_set():
                self._emit(ApprovalResolvedEvent(request_id, approved=False, message="withdrawn"))
        return pending.approved, pending.message

    def resolve(
        self, request_id: str, approved: bool, message: str | None, scope: ApprovalScope = "once"
    ) -> None:
        """Record a client's answer. ``scope`` ``session`` (approve this action for
        the rest of the session) is kept on the pending request and in the event,
        for the policy to honour."""
        pending = self.pending.pop(request_id, None)
        if pending is None:
            raise ApprovalNotFound(f"no pending approval request {request_id}")
        pending.approved = approved
        pending.message = message
        pending.scope = scope if approved else "once"
        self._emit(ApprovalResolvedEvent(request_id, approved, message, pending.scope))
        pending.done.set()

    def events(self) -> list[SessionEvent]:
        return [pending.event for pending in self.pending.values()]
