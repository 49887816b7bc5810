"""asyncio side of one remote command: drain its channel as fast as data arrives.

asyncssh re-opens a channel's window whenever it hands a packet to a paused
reader, crediting bytes still queued in its own buffer, so a command that prints
faster than its reader reads can pile up output without bound. Reading here, on
the loop that receives, and keeping only head and tail (:class:`HeadTail`) bounds
memory whatever the command prints. Deltas for a watcher are coalesced into a
bounded batch that trio collects when it is ready.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from environments.capture import HeadTail, Stream
from environments.shell.markers import MarkerFilter
from environments.shell.scripts import RemoteGroup
from environments.ssh.connect import LINK_ERRORS
from environments.ssh.pool import HostPool, Opening, RemoteProcess

_READ_SIZE = 262_144
DELTA_BATCH_CAP = 262_144
"""Bytes of undelivered deltas kept per command; a slower watcher misses the rest."""
_WRAPPER_EXIT_BOUND = 2.0
"""Seconds ``finish`` waits, once the output has ended, for sshd to report the
wrapper's exit and close the channel (see :meth:`RemoteCommand.finish`)."""
SKIPPED_NOTE = b"\n[... live output skipped: the watcher fell behind; the result has it all ...]\n"


@dataclass(frozen=True)
class CommandOutcome:
    stdout: str
    stderr: str
    stdout_omitted: int
    stderr_omitted: int
    group: RemoteGroup | None
    exit_status: int | None
    no_cwd: bool


@dataclass(eq=False)
class RemoteCommand:
    pool: HostPool
    remote: RemoteProcess
    markers: MarkerFilter
    stdout: HeadTail
    stderr: HeadTail
    want_deltas: bool
    _deltas: list[tuple[Stream, bytes]] = field(default_factory=list)
    _delta_bytes: int = 0
    _skipping: bool = False
    """Deltas are being dropped (the watcher is behind); it has been told once."""
    _exited: asyncio.Event = field(default_factory=asyncio.Event)
    _drained: asyncio.Event = field(default_factory=asyncio.Event)
    _delta_ready: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    group: RemoteGroup | None = None
    """The command's process group, once the wrapper has reported it."""

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _pump(self, stream: Stream, keep: HeadTail) -> None:
        process = self.remote.process
        reader = process.stdout if stream == "stdout" else process.stderr
        while True:
            try:
                chunk = await reader.read(_READ_SIZE)
            except LINK_ERRORS:
                chunk = b""
            at_end = not chunk
            if stream == "stderr":
                chunk = self.markers.flush() if at_end else self.markers.feed(chunk)
                if self.group is None and self.markers.started:
                    assert self.markers.pgid is not None
                    self.group = RemoteGroup(self.markers.pgid, self.markers.start_time)
                    self.pool.killer.started(self.group)
                    self.remote.group_known.set()
                if self.markers.exited:
                    self._exited.set()
            if chunk:
                keep.keep(chunk)
                self._offer(stream, chunk)
            if at_end:
                return

    def _offer(self, stream: Stream, chunk: bytes) -> None:
        if not self.want_deltas:
            return
        if self._delta_bytes + len(chunk) > DELTA_BATCH_CAP:
            if not self._skipping:
                self._skipping = True
                self._deltas.append((stream, SKIPPED_NOTE))
            return
        self._deltas.append((stream, chunk))
        self._delta_bytes += len(chunk)
        self._delta_ready.set()

    async def _drain(self) -> None:
        try:
            await asyncio.gather(
                self._pump("stdout", self.stdout), self._pump("stderr", self.stderr)
            )
        finally:
            self._drained.set()
            self._exited.set()
            self._delta_ready.set()
            self.remote.group_known.set()

    async def wait_exited(self) -> None:
        """Until the wrapper reports the exit status, or the channel ends."""
        await self._exited.wait()

    async def wait_drained(self) -> None:
        await self._drained.wait()

    async def next_deltas(self) -> list[tuple[Stream, bytes]] | None:
        """The deltas since the last call; None once the output has ended."""
        while not self._deltas:
            if self._drained.is_set():
                return None
            self._delta_ready.clear()
            await self._delta_ready.wait()
        batch, self._deltas, self._delta_bytes = self._deltas, [], 0
        self._skipping = False
        return batch

    async def finish(self) -> CommandOutcome:
        """Close the channel, give its slot back, and report what happened.

        The output ends when the wrapper closes its pipes, which it does while it
        exits, a moment before it is gone; sshd closes the channel only after it has
        reaped the wrapper. Waiting for that close (bounded) means that a call
        returns with nothing of its command left on the host, the wrapper included,
        and that the slot is given back when sshd no longer counts the session."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        elif self._task is not None:
            with contextlib.suppress(asyncio.TimeoutError, *LINK_ERRORS):
                await asyncio.wait_for(self.remote.process.wait_closed(), _WRAPPER_EXIT_BOUND)
        await self.pool.finish(self.remote)
        if self.group is not None and self.markers.exit_status is not None:
            self.pool.killer.finished(self.group)  # the wrapper ended what was left
        return CommandOutcome(
            stdout=self.stdout.text(),
            stderr=self.stderr.text(),
            stdout_omitted=self.stdout.omitted,
            stderr_omitted=self.stderr.omitted,
            group=self.group,
            exit_status=self.markers.exit_status,
            no_cwd=self.markers.no_cwd,
        )


async def start_command(
    pool: HostPool,
    script: str,
    markers: MarkerFilter,
    cap: int,
    want_deltas: bool,
    tag: str = "",
    opening: Opening | None = None,
) -> RemoteCommand:
    remote = await pool.start(script, tag, opening)
    command = RemoteCommand(pool, remote, markers, HeadTail(cap), HeadTail(cap), want_deltas)
    command.start()
    return command


@dataclass(eq=False)
class CommandStart:
    """One command's start, made by its trio caller before the start begins, so
    that a caller who leaves during the start can still end the command.

    A result crossing from this loop to trio is lost when the trio caller is
    cancelled after the start has finished here but before the caller's task took
    it; and cancelling the start while sshd starts the command (it answers the exec
    request after the fork) leaves the command running with its channel unread.
    Either way nothing would end the command. On a loaded machine, where the trio
    thread waits its turn for a CPU, a caller cancelled just after its command
    began falls into one of these. So the start is a task of its own, which the
    caller's leaving does not cancel: :meth:`abandon` cancels it only while it
    waits for room on a connection (nothing runs yet), and otherwise waits for it
    and hands the command back, to be ended like any other."""

    pool: HostPool
    opening: Opening = field(default_factory=Opening)
    _task: asyncio.Task[RemoteCommand] | None = None

    async def run(
        self, script: str, markers: MarkerFilter, cap: int, want_deltas: bool, tag: str = ""
    ) -> RemoteCommand:
        """Start the command (see :func:`start_command`); cancelling this call leaves
        the start going, for :meth:`abandon`."""
        self._task = asyncio.get_running_loop().create_task(
            start_command(self.pool, script, markers, cap, want_deltas, tag, self.opening)
        )
        return await asyncio.shield(self._task)

    async def abandon(self) -> RemoteCommand | None:
        """The started command, which its caller has left and must end; None when
        nothing was started (the start had not begun, was stopped while it waited
        for room, or failed)."""
        task = self._task
        if task is None:
            # Asked after ``run`` was cancelled before its first step (this loop runs
            # the two in the order trio sent them): it never starts anything.
            return None
        if not self.opening.now:
            task.cancel()
        try:
            return await asyncio.shield(task)  # our caller's bound must not cut the open
        except asyncio.CancelledError:
            if task.cancelled():
                return None
            raise
        except Exception:
            return None  # the start failed: no session, nothing runs


async def current_group(command: RemoteCommand) -> RemoteGroup | None:
    """The process group, read on the loop that writes it. A command stopped at its
    very start waits for the wrapper's report, or for its channel to end (the
    caller bounds the wait)."""
    await command.remote.group_known.wait()
    return command.group
