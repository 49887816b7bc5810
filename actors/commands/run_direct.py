"""``troupe run`` through a running server, without an event loop.

A headless run on a server only connects, sends its requests, and prints what the
session's events say until its input is done: the blocking client
(:mod:`protocol.client_blocking`) does that on the standard library's socket, so
the command imports neither trio nor a WebSocket library nor anything of the
runtime, which cost several times the interpreter's start. The frames, the
result object, the notices, the exit codes, Ctrl-C (interrupt the session, keep
it, exit 130) and ``--timeout`` (exit 124) are those of the trio path, through
the same code (:class:`~actors.commands.tally.EventTally`,
:func:`~actors.commands.run.conclude`).

What it leaves to the trio path (:mod:`actors.commands.run_async`): a terminal
whose typed lines steer the run or answer approvals, stream-json input, SSH and
Docker environments (they are set up on the server first), ``--embedded``, and a
server that does not answer (that path says why, or runs embedded).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from actors.commands.common import read_token
from actors.commands.errors import EXIT_OK, CommandError
from actors.commands.headless import HeadlessNotices, Printed, Startup
from actors.commands.run_route import server_for
from actors.commands.run_session import conclude, creation, finish, header, resume_changes
from actors.commands.run_session import session_to_resume as resumed_session
from actors.commands.tally import Outcome
from actors.config import Settings
from protocol.client_blocking import BlockingClient, connect
from protocol.client_errors import ConnectionRefused, RequestError
from protocol.websocket_blocking import Closed, Rejected, Woken
from protocol.wire import (
    CreateSession,
    GetSession,
    InterruptSession,
    SessionCreated,
    SessionDetail,
    SubmitInput,
    SubscribeSession,
    UpdateSessionConfig,
)

SSH_PREFIX = "/environments/ssh/"
INTERRUPT_WAIT = 3.0
"""How long an interrupt waits for the server's answer (as the trio path)."""


class DirectFollower(HeadlessNotices):
    """The follower of a run through the blocking client."""


def run_direct(
    args: argparse.Namespace,
    settings: Settings,
    workdir: Path,
    task: str | None,
    printed: Printed,
    startup: Startup,
) -> int | None:
    """The run, or None when this client cannot have it: no server for it, or the
    server did not take the connection (nothing is sent then)."""
    url = server_for(args, settings)
    if url is None or task is None:
        return None
    resumed = resumed_session(args, workdir)
    try:
        client = connect(url, read_token(args), client="troupe-run")
    except (OSError, Rejected, Closed, ConnectionRefused, ValueError):
        return None  # the trio path tries again and says why, or runs embedded
    try:
        opened = open_session(client, args, settings, workdir, resumed)
        if opened is None:
            return None
        session, after_seq, where = opened
        startup.done()
        follower = DirectFollower(session, args.output_format, printed=printed)
        follower.renderer.verbose = bool(getattr(args, "verbose", False))
        follower.outcome.runtime = url
        text = args.output_format == "text"
        label = f"server {url}"
        if text:
            follower.renderer.note(header(args, session, where, label, resumed is not None))
        outcome = _follow(client, follower, args, task, after_seq)
        if text and outcome.status != "disconnected":
            follower.renderer.status(outcome.exit_code == EXIT_OK, outcome.status_line())
    except Closed:  # before following: as the trio client, a lost connection
        raise CommandError(f"the server at {url} closed the connection") from None
    finally:
        client.close()
    return finish(args, outcome, session, label)


def open_session(
    client: BlockingClient,
    args: argparse.Namespace,
    settings: Settings,
    workdir: Path,
    resumed: str | None,
) -> tuple[str, int, str] | None:
    """As :func:`actors.commands.run_session.open_session`; None for a session on an SSH
    host (the trio path connects the server to the host again first)."""
    if resumed is None:
        fields = creation(args, settings, workdir)
        created = cast(SessionCreated, client.request(CreateSession, **fields))
        return created.session.session_id, 0, str(workdir)
    detail = cast(SessionDetail, client.request(GetSession, session=resumed))
    if detail.session.environment.startswith(SSH_PREFIX):
        return None
    client.request(UpdateSessionConfig, session=resumed, **resume_changes(args))
    return resumed, detail.session.last_seq, str(workdir)


def _follow(
    client: BlockingClient,
    follower: DirectFollower,
    args: argparse.Namespace,
    task: str,
    after_seq: int,
) -> Outcome:
    """Follow until the input is done; Ctrl-C or ``--timeout`` interrupts the
    session (kept for --resume) and ends the command with 130 or 124."""
    timeout: float | None = getattr(args, "timeout", None)
    interrupted = timed_out = False
    with _interrupts(client) as signalled:
        client.request(SubscribeSession, session=follower.session, after_seq=after_seq)
        follower.state = "processing"
        client.request(SubmitInput, session=follower.session, text=task)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    event = client.next_event(left)
                except Woken:
                    if signalled():
                        interrupted = True
                        break
                    continue
                except TimeoutError:
                    timed_out = True
                    break
                except Closed:
                    follower.disconnected()
                    break
                if follower.take(event):
                    break
            if interrupted or timed_out:
                _interrupt(client, follower.session)
        finally:
            follower.renderer.close()
    return conclude(follower, interrupted, timed_out, timeout)


def _interrupt(client: BlockingClient, session: str) -> None:
    """Stop the current work, keep the session (best effort, bounded)."""
    client.websocket.wake = None  # a second Ctrl-C does not cut this short
    with contextlib.suppress(RequestError, TimeoutError, Closed, OSError):
        client.request(InterruptSession, session=session, immediate=True, timeout=INTERRUPT_WAIT)


@contextlib.contextmanager
def _interrupts(client: BlockingClient) -> Iterator[Callable[[], bool]]:
    """While following, Ctrl-C ends the wait for the next frame (never a read
    halfway through one): the handler only records it and the wake-up
    descriptor wakes the client's ``select``."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False  # no signal reaches this thread
        return
    seen: list[int] = []
    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    previous = signal.signal(signal.SIGINT, lambda number, frame: seen.append(number))
    previous_fd = signal.set_wakeup_fd(writer)
    client.websocket.wake = reader

    def signalled() -> bool:
        with contextlib.suppress(BlockingIOError):
            os.set_blocking(reader, False)
            os.read(reader, 512)
        return bool(seen)

    try:
        yield signalled
    finally:
        client.websocket.wake = None
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGINT, previous)
        os.close(reader)
        os.close(writer)
