"""What ``troupe run`` adds to following a session, whichever client it follows
with (the trio one, or the blocking one through a running server): whether its
result object is out, and the notices a headless run owes the person reading
stderr."""

from __future__ import annotations

import gc
import re
import sys
from typing import Any

import msgspec

from actors.commands.tally import EventTally
from actors.commands.visible import visible
from protocol.events import ErrorEvent, EventData, PolicyDecisionEvent
from protocol.wire import Event

_CONNECT_FAILED = re.compile(r"ConnectError|connection refused|failed to connect|connect to",
                             re.IGNORECASE)  # fmt: skip
MODEL_HINT = "`troupe config` shows the base URL in use"


class Printed(msgspec.Struct):
    """Whether the run's result object is out (json output prints exactly one).
    (Structs, not dataclasses, here and in :mod:`actors.commands.tally`: a
    dataclass costs its class's creation about 20 times as much, on every start.)"""

    result: bool = False


class Startup(msgspec.Struct):
    """Python's cyclic garbage collector is off while the command starts: loading
    the runtime allocates hundreds of thousands of objects that all live on, and
    the collections their allocation triggers (about a hundred, tens of
    milliseconds in all) find nothing to free. Once the session is open
    (:meth:`done`) what exists is frozen (``gc.freeze``: kept out of later
    collections, as a forking server does for its parent's objects; a cycle of
    garbage made while starting stays, a few objects at most) and the collector
    is on again for however long the session runs; in any case when the command
    ends. A collector someone else turned off stays off."""

    paused: bool = False

    def pause(self) -> None:
        if gc.isenabled():
            gc.disable()
            self.paused = True

    def done(self) -> None:
        if self.paused:
            self.paused = False
            gc.freeze()
            gc.enable()


class HeadlessNotices(EventTally):
    """A call denied because nobody could answer its approval gets a one-line
    notice on stderr (stdout stays the result). The command is the model's: shown
    through :func:`visible`, so it cannot move the cursor, erase the line or split
    the notice. A model endpoint that did not answer gets a hint."""

    def __init__(self, *args: Any, printed: Printed, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.printed = printed

    def emit_result(self) -> None:
        self.printed.result = True
        super().emit_result()

    def _account(self, event: Event, data: EventData | None) -> None:
        super()._account(event, data)
        error = self.outcome.error
        if isinstance(data, ErrorEvent) and error and _CONNECT_FAILED.search(error):
            self.outcome.error = f"{error} (is your model server running? {MODEL_HINT})"
        if (
            isinstance(data, PolicyDecisionEvent)
            and data.decided_by == "nobody"
            and event.seq > self.known_until
        ):
            print(
                f"troupe run: denied {visible(data.subject or data.tool)}: nobody to ask for "
                "approval "
                "(stdin is not a terminal; --approval never-ask or allow-workspace lets such "
                "calls run)",
                file=sys.stderr,
                flush=True,
            )
