"""``troupe run`` on the trio client: in an embedded runtime, or on a server for
what the blocking client (:mod:`actors.commands.run_direct`) leaves to it: typed
lines at a terminal, stream-json input, SSH and Docker environments, a server that
did not answer it."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import trio

from actors.commands.errors import EXIT_OK
from actors.commands.headless import HeadlessNotices, Printed, Startup
from actors.commands.interact import Follower
from actors.commands.run_session import (
    conclude,
    finish,
    header,
    open_session,
    session_to_resume_off_loop,
)
from actors.commands.session_host import open_host
from actors.commands.stream_input import read_stream_json
from actors.commands.tally import Outcome
from actors.config import Settings


class HeadlessFollower(HeadlessNotices, Follower):
    """The follower of ``troupe run`` (see :class:`HeadlessNotices`)."""


async def run_async(
    args: argparse.Namespace,
    settings: Settings,
    workdir: Path,
    task: str | None,
    printed: Printed,
    startup: Startup,
) -> int:
    resumed = await session_to_resume_off_loop(args, workdir)
    async with open_host(args, settings, workdir, in_process=True) as host:
        session, after_seq, where = await open_session(host, args, settings, workdir, resumed)
        startup.done()
        follower = HeadlessFollower(host.client, session, args.output_format, printed=printed)
        follower.outcome.runtime = "embedded" if host.embedded else host.url
        text = args.output_format == "text"
        if text:  # verbose draws diffs in full: only text output draws them
            follower.renderer.verbose = bool(getattr(args, "verbose", False))
        if host.note:
            print(f"troupe run: {host.note}", file=sys.stderr, flush=True)
        if text:
            follower.renderer.note(header(args, session, where, host.label, bool(resumed)))
        outcome = await _follow(follower, args, task, after_seq)
        if text and outcome.status != "disconnected":
            follower.renderer.status(outcome.exit_code == EXIT_OK, outcome.status_line())
    return finish(args, outcome, session, host.label)


async def _follow(
    follower: Follower, args: argparse.Namespace, task: str | None, after_seq: int
) -> Outcome:
    """Follow until the input is done; Ctrl-C interrupts the session (kept for
    --resume) and ends the command with 130."""
    streaming = args.input_format == "stream-json"
    interactive = not streaming and args.output_format == "text" and sys.stdin.isatty()
    interrupted = timed_out = False
    timeout: float | None = getattr(args, "timeout", None)
    async with trio.open_nursery() as nursery:

        async def on_timeout(seconds: float) -> None:
            """The wall-clock limit: stop the work as Ctrl-C does; leaving the host
            then runs the shutdown ladder, so no command outlives the run."""
            nonlocal timed_out
            await trio.sleep(seconds)
            timed_out = True
            await follower.interrupt(immediate=True)
            follower.finish()

        async def on_interrupt(signals: AsyncIterator[int]) -> None:
            nonlocal interrupted
            async for _ in signals:
                interrupted = True
                await follower.interrupt(immediate=True)
                follower.finish()
                return

        with trio.open_signal_receiver(signal.SIGINT) as signals:
            nursery.start_soon(on_interrupt, signals)
            if timeout is not None:
                nursery.start_soon(on_timeout, timeout)
            if streaming:
                follower.more_input = True
                nursery.start_soon(read_stream_json, follower)
            follower.offer_extend = interactive
            await follower.run(
                task, after_seq=after_seq, interactive=interactive, emit_result=False
            )
            nursery.cancel_scope.cancel()
    return conclude(follower, interrupted, timed_out, timeout)
