"""``troupe`` at a terminal: an interactive conversation in the current directory.

A new session (or ``--continue`` / ``--resume ID`` to go on with one) on the same
plumbing as ``troupe run``: the running local server when there is one, else an
embedded runtime; the same renderer. The conversation alternates two phases:

- **idle**: a prompt_toolkit prompt (:mod:`actors.commands.line_editor`) takes the
  next input, multi-line, with history; a line starting with ``/`` is a command
  (:mod:`actors.commands.slash`); Ctrl-D or ``/exit`` leaves (exit 0, the session
  is kept); Ctrl-C clears the line.
- **working**: the session's events stream by while the terminal is in its
  normal line mode, so a typed line steers the session, answers an open approval,
  or (``stop``) stops it after the current step, exactly as in ``troupe run``.
  Ctrl-C interrupts the turn at once (the session stays; the next input goes on
  with it); a second Ctrl-C returns to the prompt without waiting.

One task follows the session's events for the whole conversation; the phases
only decide who reads the keyboard.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import trio

from actors.commands.common import data_dir
from actors.commands.errors import (
    EXIT_BAD_INPUT,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
)
from actors.commands.interact import Follower
from actors.commands.line_editor import LineEditor
from actors.commands.render_calls import dollars
from actors.commands.run_session import open_session, session_to_resume_off_loop, unsandboxed
from actors.commands.session_host import Host, open_host
from actors.commands.settings_flags import check_policy, settings_for
from actors.commands.slash import SlashCommands, is_command
from actors.commands.trust import ask_to_trust
from actors.config import Settings
from protocol.client import RequestError
from protocol.wire import SubscribeSession, UnsubscribeSession

HISTORY_FILE = "history"
"""The prompt's history, in the data directory (hidden from sessions like the rest)."""


def is_terminal() -> bool:
    """Both ends at a person: only then does ``troupe`` alone open a conversation."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except ValueError:  # a closed stream
        return False


RUN_DEFAULTS = {"input_format": "text", "output_format": "text", "continue_latest": False}
"""``troupe run``'s flags the conversation has no flag for: sessions are opened by
run's own code, which reads them (the rest default to None)."""
RUN_FLAGS = ("task", "prompt", "ssh_host", "environment", "preset", "workdir", "policy",
             "resume", "verbose", "approval", "sandbox", "agentic", "max_iterations",
             "tool_calling", "max_turns", "input_token_budget", "session_token_budget",
             "reasoning_effort", "instructions", "output_last_message", "fallback",
             "compaction", "context_window", "max_cost", "max_input_cost",
             "provider_options")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    for name in RUN_FLAGS:
        if not hasattr(args, name):
            setattr(args, name, None)
    for name, value in RUN_DEFAULTS.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    workdir = Path(args.workdir or ".").resolve()
    if not workdir.is_dir():
        raise CommandError(f"{workdir} is not a directory", EXIT_BAD_INPUT)
    settings = settings_for(args, workdir)
    if ask_to_trust(workdir, settings.ignored):  # as ``troupe run`` does, before anything runs
        settings = settings_for(args, workdir)
    check_policy(settings.get("policy"))
    return trio.run(_converse, args, settings, workdir)


async def _converse(args: argparse.Namespace, settings: Settings, workdir: Path) -> int:
    resumed = await session_to_resume_off_loop(args, workdir)
    async with open_host(args, settings, workdir, in_process=True) as host:
        if host.note:
            print(f"troupe: {host.note}", file=sys.stderr, flush=True)
        return await Conversation(host, args, settings, workdir).run(resumed)


class Conversation:
    """The prompt, the session's events, and the commands between them."""

    def __init__(
        self, host: Host, args: argparse.Namespace, settings: Settings, workdir: Path
    ) -> None:
        self.host = host
        self.args = args
        self.settings = settings
        self.workdir = workdir
        self.where = str(workdir)
        self.editor = LineEditor(data_dir(args) / HISTORY_FILE)
        self.slash = SlashCommands(self)
        self.follower: Follower | None = None
        self._pump: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._working = False
        self._interrupts = 0
        self._turn: _Totals | None = None
        self.leaving = False
        self.prefill = ""
        """Text for the next prompt's buffer (a rewound input, to edit and send)."""

    @property
    def session(self) -> Follower:
        assert self.follower is not None, "a conversation always has a session"
        return self.follower

    @property
    def remote(self) -> bool:
        """Whether the session works on an SSH host (``/diff`` cannot run git here)."""
        return "ssh host" in self.where

    def note(self, text: str) -> None:
        self.session.renderer.note(text)

    async def run(self, resumed: str | None) -> int:
        with trio.open_signal_receiver(signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._on_interrupts, signals)
                await self.open_session(resumed)
                self.note("/help lists the commands; Ctrl-D or /exit leaves (the session is kept)")
                code = await self._loop()
                nursery.cancel_scope.cancel()
        if self.follower is not None:
            session = self.follower.session
            self.follower.renderer.close()
            print(f"session {session} is kept: troupe --resume {session}", flush=True)
        return code

    async def open_session(self, resumed: str | None) -> None:
        """Start following a session: ``resumed``, or a new one (``/clear``)."""
        assert self._nursery is not None
        old = self.follower
        if old is not None:
            if self._pump is not None:
                self._pump.cancel()
            old.renderer.close()
            with contextlib.suppress(RequestError):
                await self.host.client.request(UnsubscribeSession, session=old.session)
        session, after_seq, where = await open_session(
            self.host, self.args, self.settings, self.workdir, resumed
        )
        self.where = where
        follower = Follower(self.host.client, session, "text")
        follower.more_input = True  # the pump follows past each input's end
        follower.renderer.verbose = bool(self.args.verbose)
        follower.outcome.runtime = "embedded" if self.host.embedded else self.host.url
        verb = "resuming" if resumed else "session"
        header = f"{verb} {session} in {where} ({self.host.label}){unsandboxed(self.args)}"
        follower.renderer.note(header)
        await self.host.client.request(SubscribeSession, session=session, after_seq=after_seq)
        self.follower = follower
        self._pump = await self._nursery.start(self._follow, follower)

    async def _follow(
        self, follower: Follower, task_status: trio.TaskStatus[trio.CancelScope]
    ) -> None:
        with trio.CancelScope() as scope:
            task_status.started(scope)
            await follower.follow()

    async def _loop(self) -> int:
        while True:
            follower = self.session
            if follower.finished:
                return self._ended(follower)
            if follower.state == "processing":
                await self._work(follower)
                continue
            if self.leaving:
                return EXIT_OK
            typed = await self.editor.read(default=self.prefill)
            self.prefill = ""
            if typed.end:
                return EXIT_OK
            if typed.interrupted:
                self.note("(Ctrl-D or /exit leaves; the session is kept)")
                continue
            text = typed.text.strip()
            if not text:
                continue
            if is_command(text):
                follower.renderer.line("context", f"> {text}")
                await self.slash.run(text)
                continue
            await self.submit(text)

    async def submit(self, text: str) -> None:
        """A new input (the counters of its turn start now)."""
        follower = self.session
        outcome = follower.outcome
        outcome.status, outcome.exit_code, outcome.error = "done", EXIT_OK, None
        outcome.stopped_by_user = False
        self._turn = _Totals.of(follower)
        try:
            await follower.submit(text)
        except RequestError as error:
            self.note(f"[refused] {error}")

    def _ended(self, follower: Follower) -> int:
        if follower.outcome.status == "disconnected":
            raise CommandError(
                f"lost the connection to the {self.host.label}; session {follower.session} "
                f"may still be running there (troupe attach {follower.session})",
                EXIT_ERROR,
            )
        return EXIT_OK

    async def _work(self, follower: Follower) -> None:
        """Until the session is done with its input: typed lines steer it."""
        before, self._turn = self._turn or _Totals.of(follower), None
        outcome = follower.outcome
        self._working, self._interrupts = True, 0
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._read_typed, follower)
                await follower.wait_idle()
                nursery.cancel_scope.cancel()
        finally:
            self._working = False
            follower.renderer.close()
        if self._interrupts and outcome.status == "done":
            outcome.status, outcome.exit_code = "interrupted", EXIT_INTERRUPTED
        if not follower.finished:
            follower.renderer.status(outcome.exit_code == EXIT_OK, before.turn_line(follower))

    async def _read_typed(self, follower: Follower) -> None:
        async for line in _lines_of_stdin():
            if is_command(line) and self.slash.known(line):
                await self.slash.run(line)
            else:
                await follower.typed(line)

    async def _on_interrupts(self, signals: AsyncIterator[int]) -> None:
        """Ctrl-C while the session works: interrupt the turn (a second one stops
        waiting for it); at the prompt the terminal is raw and Ctrl-C is a key."""
        async for _ in signals:
            follower = self.follower
            if not self._working or follower is None:
                continue
            self._interrupts += 1
            if self._interrupts == 1:
                follower.renderer.note("[interrupting; the session is kept]")
                await follower.interrupt(immediate=True)
            else:
                follower.renderer.note("[not waiting for the interrupt]")
                follower.mark_idle()

    async def interrupt_and_wait(self) -> None:
        """Stop the current turn and wait until the session says it stopped."""
        follower = self.session
        if follower.state == "processing":
            await follower.interrupt(immediate=True)
            with trio.move_on_after(10):
                await follower.wait_idle()


async def _lines_of_stdin() -> AsyncIterator[str]:
    """Lines typed while the session works (the terminal in its line mode)."""
    stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    buffer = b""
    async with stream:
        while True:
            chunk = await stream.receive_some()
            if not chunk:  # Ctrl-D while it works: no more steering this turn
                return
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = raw.decode(errors="replace").strip()
                if line:
                    yield line


class _Totals:
    """The conversation's counters at a turn's start, for the turn's own line."""

    def __init__(self, iterations: int, tokens: int, cost: float | None) -> None:
        self.iterations, self.tokens, self.cost = iterations, tokens, cost
        self.started = time.monotonic()

    @classmethod
    def of(cls, follower: Follower) -> _Totals:
        outcome = follower.outcome
        tokens = outcome.usage.get("input_tokens", 0) + outcome.usage.get("output_tokens", 0)
        return cls(outcome.iterations, tokens, outcome.cost_usd)

    def turn_line(self, follower: Follower) -> str:
        """``✓ done · 2 model calls · 1,234 tokens · $0.0012 · 3.1s`` for this turn."""
        now = _Totals.of(follower)
        outcome = follower.outcome
        mark = "✓" if outcome.exit_code == EXIT_OK else "✗"
        head = f"{mark} {outcome.status}" + (f": {outcome.error}" if outcome.error else "")
        calls = now.iterations - self.iterations
        parts = [head, f"{calls} model call{'s' if calls != 1 else ''}"]
        if now.tokens - self.tokens:
            parts.append(f"{now.tokens - self.tokens:,} tokens")
        if now.cost is not None and self.cost is not None and now.cost - self.cost > 0:
            parts.append(dollars(now.cost - self.cost))
        parts.append(f"{time.monotonic() - self.started:.1f}s")
        return " · ".join(parts)


__all__ = ["Conversation", "is_terminal", "run"]
