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
import os
import re
import sys
from typing import TYPE_CHECKING, Any

import trio

from actors.commands.errors import EXIT_OK
from actors.commands.extend_prompt import extend_amount
from actors.commands.tally import EventTally, Outcome, OutputFormat
from protocol.client_errors import RequestError
from protocol.wire import (
    ExtendSessionLimit,
    InterruptSession,
    ResolveApproval,
    SteerSession,
    SubmitInput,
    SubscribeSession,
)

if TYPE_CHECKING:  # an embedded run's client is the in-process host's: no WebSocket client
    from protocol.client import TroupeClient


class Follower(EventTally):
    """Subscribes to a session, shows its events, and turns typed lines into requests."""

    def __init__(
        self,
        client: TroupeClient,
        session: str,
        output_format: OutputFormat = "text",
        until: tuple[str, ...] = ("processing_end", "session_end"),
    ) -> None:
        super().__init__(session, output_format, until)
        self.client = client
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
            self.close_renderer()
        if emit_result:
            self.emit_result()
        return self.outcome

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
        async for event in self.client.events():
            if self.take(event):
                self.finish()
                return
        self.disconnected()
        self.finish()

    def _set_state(self, state: str) -> None:
        super()._set_state(state)
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
        from actors.commands.render import offered_rule

        if offered_rule(details or {}) is None:
            raise UnofferedAnswer(NO_RULE)
        return {"approved": True, "scope": "rule"}
    if word in ("n", "no"):
        return {"approved": False}
    return {"approved": False, "message": line.strip()}


def _words_of(offered: dict[str, Any]) -> set[str]:
    words = {offered.get(key) for key in ("answer", "key", "label")}
    return {word.strip().lower() for word in words if isinstance(word, str) and word.strip()}


__all__ = [
    "Follower",
    "UnofferedAnswer",
    "approval_answer",
    "is_stop",
]
