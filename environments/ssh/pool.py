"""asyncio side: the connections to one host and the sessions open on each.

Runs only on the bridge's asyncio loop, so the bookkeeping below needs no lock:
nothing awaits between reading and changing it. Connecting never blocks anyone:
a connect is a task of its own (one per new connection), callers wait for it or
for a channel to be handed back, each bounded by its own deadline, and when a
connect fails every caller that was waiting on it fails at once with its error.

Per connection, at most ``limit`` sessions are open: command channels, the SFTP
session, and one session that commands may never take, kept for the kill path
(:mod:`environments.ssh.killer`). ``limit`` starts at ``channels_per_connection +
2`` (sshd's default MaxSessions is 10) and is lowered to what sshd really allows
the first time it refuses a channel: a refusal is a signal, not a lost link.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from actors.kernel.processes import KILL_GRACE, ProcessLedger
from environments.errors import ConnectionLost, EnvironmentError_, InvalidRequest
from environments.ssh.connect import (
    LINK_ERRORS,
    ConnectOptions,
    classify,
    load_client_keys,
    login_shell_is_bash,
    open_connection,
)
from environments.ssh.killer import Killer, Owed
from environments.ssh.target import SSHTarget

REMOTE_SHELL = "exec bash --norc --noprofile -s"
"""What every channel runs: the wrapper comes on stdin. The login shell has already
sourced the user's startup files and exported their variables; a second sourcing
(bash does it for any shell sshd starts) would only cost time on every command."""

COMMAND_WINDOW = 256 * 1024
"""SSH receive window of a command channel. asyncssh's 2 MiB default lets a flood of
output pile up (it re-opens the window while its reader is paused); a smaller window
keeps a command's buffered output bounded without slowing loopback or LAN links."""

_KILL_RESERVE = 1
"""Sessions per connection that commands never take: the kill path's."""
_MAX_OPEN_ATTEMPTS = 8
_DIRECT_SCRIPT_LIMIT = 64 * 1024
"""Longest wrapper sent as the command itself: sshd hands it to the shell as one
argument, and Linux caps one argument at 128 KiB."""
_REPORT_WAIT = 10.0
"""Seconds closing waits for a just-started command to report its group, and for
the wrappers to exit after their groups were ended."""


@dataclass(eq=False)
class Link:
    """One SSH connection and the sessions open (or opening) on it."""

    connection: asyncssh.SSHClientConnection
    limit: int
    commands: int = 0
    """Command and helper channels open or being opened."""
    kills: int = 0
    confirmed: int = 0
    """Sessions sshd has accepted and we have not closed (what it counts)."""
    sftp: asyncssh.SFTPClient | None = None
    sftp_opening: asyncio.Future[asyncssh.SFTPClient] | None = None
    learned: bool = False
    """sshd has refused a session here, so ``limit`` is what it really allows."""

    dead: bool = False
    """Found broken by us; asyncssh may take a loop turn to say it is closed."""

    @property
    def closed(self) -> bool:
        return self.dead or self.connection.is_closed()

    @property
    def sessions(self) -> int:
        holds_sftp = self.sftp is not None or self.sftp_opening is not None
        return self.commands + self.kills + (1 if holds_sftp else 0)

    @property
    def command_room(self) -> int:
        """Command channels that may still open here (the kill reserve excluded)."""
        return self.limit - _KILL_RESERVE - (self.sessions - self.kills)


@dataclass(eq=False)
class RemoteProcess:
    """A command channel, and the link (slot) it holds until released."""

    link: Link
    process: asyncssh.SSHClientProcess[bytes]
    group_known: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the wrapper has reported the process group (or the channel ended)."""


@dataclass(eq=False)
class Opening:
    """Whether a start is opening its session right now. sshd answers the exec
    request only once it has forked the command, so a start cut short from here on
    may leave the command running with nobody reading its channel or able to end it:
    :class:`~environments.ssh.command.CommandStart` cancels a start only while this
    is false (it waits for room, or for a connection, and nothing runs yet)."""

    now: bool = False


@dataclass(eq=False)
class HostPool:
    target: SSHTarget
    options: ConnectOptions
    ledger: ProcessLedger | None = None
    """A :class:`~actors.kernel.processes.ProcessLedger` where started groups are
    recorded so that a restarted Troupe can end them; None records nothing."""
    kill_grace: float = KILL_GRACE
    """SIGTERM to SIGKILL when the pool ends a group (the runtime's ``kill_grace``)."""
    _links: list[Link] = field(default_factory=list)
    _connecting: int = 0
    _waiting: int = 0
    _changed: asyncio.Event | None = None
    _connect_error: Exception | None = None
    _connect_failures: int = 0
    _keys: Any = None
    _limit_guess: int = 0
    _closed: bool = False
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _open: set[RemoteProcess] = field(default_factory=set)
    _login_is_bash: bool | None = None
    """Whether the login's shell is bash: then a command's wrapper is sent as the
    command itself, saving a second bash (and bash's byte-by-byte read of stdin)."""
    killer: Killer = field(init=False)

    def __post_init__(self) -> None:
        self._limit_guess = self.options.channels_per_connection + 1 + _KILL_RESERVE
        self.killer = Killer(self, self.kill_grace)

    # -- waiting and notifying ---------------------------------------------------

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def _wait_change(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    def _check_open(self) -> None:
        if self._closed:
            raise ConnectionLost(f"{self.target}: environment closed")

    def live_links(self) -> list[Link]:
        self._links = [link for link in self._links if not link.closed]
        return self._links

    # -- connecting, outside any lock --------------------------------------------

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _want_connections(self) -> None:
        """Start the connects the waiting callers need (one at a time to a host that
        has no live connection, so a dead host costs one attempt, not one per call)."""
        live = len(self.live_links())
        room = max(1, self._limit_guess - 1 - _KILL_RESERVE)
        demand = self._waiting - self._connecting * room
        if demand <= 0:
            return
        budget = self.options.max_connections - live - self._connecting
        wanted = min(math.ceil(demand / room), budget)
        if live == 0:
            wanted = min(wanted, 1 - self._connecting)
        for _ in range(max(0, wanted)):
            self._connecting += 1
            self._spawn(self._connect())

    async def new_link(self) -> Link:
        """Open one more connection now (the kill path's way past a full pool)."""
        if self._keys is None:
            self._keys = load_client_keys(self.options)
        connection = await open_connection(self.target, self.options, self._keys)
        if self._closed:
            connection.close()
            self._check_open()
        if self._login_is_bash is None:
            self._login_is_bash = await login_shell_is_bash(connection)
        link = Link(connection, self._limit_guess)
        self._links.append(link)
        self.killer.link_ready()
        return link

    async def _connect(self) -> None:
        try:
            await self.new_link()
        except Exception as exc:
            self._connect_error = exc
            self._connect_failures += 1
        finally:
            self._connecting -= 1
            self._notify()

    async def _acquire(self) -> Link:
        """A link with room for one more command channel (counted as taken)."""
        failures_seen = self._connect_failures
        while True:
            self._check_open()
            links = self.live_links()
            best = max(links, key=lambda link: link.command_room, default=None)
            if best is not None and best.command_room > 0:
                best.commands += 1
                return best
            if not links and self._connect_failures != failures_seen and not self._connecting:
                assert self._connect_error is not None
                raise self._connect_error
            self._waiting += 1
            try:
                self._want_connections()
                await self._wait_change()
            finally:
                self._waiting -= 1

    def _release(self, link: Link, opened: bool) -> None:
        link.commands -= 1
        if opened:
            link.confirmed -= 1
        self._notify()

    def _refused(self, link: Link, error: asyncssh.ChannelOpenError) -> None:
        """sshd refused a session: it allows no more than it has open right now.

        Opens sent together are answered together, so sessions still opening may
        yet succeed: the limit rises again with each one that does (``_opened``)."""
        if link.confirmed == 0 and link.sessions == 0:
            raise InvalidRequest(
                f"{self.target}: the server refuses every session ({error.reason})"
            ) from None
        link.learned = True
        link.limit = max(1, min(link.limit, link.confirmed))
        self._limit_guess = link.limit
        self._notify()

    def _opened(self, link: Link) -> None:
        link.confirmed += 1
        if link.learned and link.confirmed > link.limit:
            link.limit = link.confirmed
            self._limit_guess = link.limit

    def _dropped(self, link: Link) -> None:
        link.dead = True
        link.connection.abort()
        self._notify()

    # -- channels ----------------------------------------------------------------

    async def _open_channel(self, open_it: Any, opening: Opening | None = None) -> tuple[Link, Any]:
        """Open a session on some link: a refusal lowers that link's limit and tries
        again; a link found dead before anything started is retried once, fresh.
        ``opening`` is kept up to date with whether a session is being opened."""
        opening = opening if opening is not None else Opening()
        retried_dead = False
        for _ in range(_MAX_OPEN_ATTEMPTS):
            opening.now = False
            link = await self._acquire()
            opening.now = True
            try:
                channel = await open_it(link.connection)
            except asyncssh.ChannelOpenError as exc:
                self._release(link, opened=False)
                if not _link_gone(link, exc):
                    self._refused(link, exc)
                    continue
                self._dropped(link)
                if retried_dead:
                    raise classify(exc, self.target) from None
                retried_dead = True
                continue
            except LINK_ERRORS as exc:
                self._release(link, opened=False)
                self._dropped(link)
                if retried_dead:
                    raise classify(exc, self.target) from None
                retried_dead = True
                continue
            except BaseException:
                self._release(link, opened=False)
                raise
            self._opened(link)
            self.killer.link_ready()
            return link, channel
        raise ConnectionLost(f"{self.target}: no session could be opened")

    async def start(
        self, script: str, tag: str = "", opening: Opening | None = None
    ) -> RemoteProcess:
        """Open a channel running ``script`` (a bash script): as the command itself
        when the login shell is bash and it is short, else fed to ``bash -s`` with
        ``tag`` as its argument, so the wrapper's command line names the call either
        way (the kill path finds a call that never reported its group by it).
        ``opening`` tells when the command may already run (see :class:`Opening`)."""
        direct = bool(self._login_is_bash) and len(script) <= _DIRECT_SCRIPT_LIMIT
        command = script if direct else _with_argument(REMOTE_SHELL, tag)

        async def open_process(connection: asyncssh.SSHClientConnection) -> Any:
            return await connection.create_process(command, encoding=None, window=COMMAND_WINDOW)

        link, process = await self._open_channel(open_process, opening)
        try:
            if not direct:
                process.stdin.write(script.encode())
            process.stdin.write_eof()
        except LINK_ERRORS as exc:
            process.close()
            self._release(link, opened=True)
            raise classify(exc, self.target) from None
        remote = RemoteProcess(link, process)
        self._open.add(remote)
        return remote

    async def open_interactive(self, command: str) -> RemoteProcess:
        """A channel running ``command`` with its standard input left open (the
        persistent terminal's shell); ended with :meth:`finish`."""

        async def open_process(connection: asyncssh.SSHClientConnection) -> Any:
            return await connection.create_process(command, encoding=None, window=COMMAND_WINDOW)

        link, process = await self._open_channel(open_process)
        remote = RemoteProcess(link, process)
        self._open.add(remote)
        return remote

    async def finish(self, remote: RemoteProcess) -> None:
        """Close the channel and give its slot back."""
        self._open.discard(remote)
        try:
            remote.process.close()
        finally:
            self._release(remote.link, opened=True)

    async def run(self, script: str, timeout: float = 60.0) -> tuple[int, bytes, bytes]:
        """Run a short helper script to completion: (exit status, stdout, stderr)."""

        async def open_process(connection: asyncssh.SSHClientConnection) -> Any:
            return await connection.create_process(REMOTE_SHELL, encoding=None)

        link, process = await self._open_channel(open_process)
        try:
            result = await asyncio.wait_for(process.communicate(script.encode()), timeout)
        except TimeoutError as exc:
            raise ConnectionLost(f"{self.target}: helper command timed out: {exc}") from None
        except LINK_ERRORS as exc:
            raise classify(exc, self.target) from None
        finally:
            process.close()
            self._release(link, opened=True)
        status = process.exit_status if process.exit_status is not None else -1
        stdout, stderr = result
        return status, bytes(stdout or b""), bytes(stderr or b"")

    def _shared_sftp(self) -> asyncssh.SFTPClient | asyncio.Future[Any] | None:
        for link in self.live_links():
            if link.sftp is not None:
                return link.sftp
            if link.sftp_opening is not None:
                return link.sftp_opening
        return None

    async def sftp(self) -> asyncssh.SFTPClient:
        """The pool's one SFTP client; simultaneous first callers share one open."""
        while True:
            self._check_open()
            shared = self._shared_sftp()
            if isinstance(shared, asyncio.Future):
                return await asyncio.shield(shared)
            if shared is not None:
                return shared
            link = await self._acquire()  # a session counted as a command until it is SFTP
            link.commands -= 1
            if self._shared_sftp() is not None:  # another caller started one meanwhile
                self._notify()
                continue
            loop = asyncio.get_running_loop()
            future: asyncio.Future[asyncssh.SFTPClient] = loop.create_future()
            link.sftp_opening = future
            try:
                client = await link.connection.start_sftp_client()
            except asyncssh.ChannelOpenError as exc:
                future.cancel()
                try:
                    if _link_gone(link, exc):
                        self._dropped(link)
                        raise classify(exc, self.target) from None
                    self._refused(link, exc)
                finally:
                    link.sftp_opening = None
                    self._notify()
                continue
            except LINK_ERRORS as exc:
                link.sftp_opening = None
                error = classify(exc, self.target)
                future.set_exception(error)
                future.exception()  # retrieved: sharers that left need not see it
                self._notify()
                raise error from None
            except BaseException:
                link.sftp_opening = None
                future.cancel()
                self._notify()
                raise
            self._opened(link)
            link.sftp, link.sftp_opening = client, None
            future.set_result(client)
            return client

    # -- process groups: the kill path, orphans, the ledger ----------------------

    async def kill(self, groups: Sequence[Owed]) -> bool:
        """End ``groups`` (TERM, grace, KILL) over the reserved session; False when it
        could not be delivered (they are remembered and ended on reconnect)."""
        return await self.killer.kill(groups)

    async def remember_orphan(self, group: Owed) -> None:
        """A group we could not end because the link dropped: end it on reconnect."""
        self.killer.remember(group)

    async def close(self, grace: float) -> None:
        """End every group still running (and the wrappers that wait for them), then
        close the connections."""
        unknown = [r.group_known.wait() for r in self._open if not r.group_known.is_set()]
        if unknown:  # commands that have only just started: learn their groups first
            await asyncio.wait([self._spawn(wait) for wait in unknown], timeout=_REPORT_WAIT)
        with contextlib.suppress(EnvironmentError_):
            await self.killer.end_all(grace)
        closing = [self._spawn(remote.process.wait_closed()) for remote in self._open]
        if closing:  # each wrapper exits once its group is gone
            await asyncio.wait(closing, timeout=_REPORT_WAIT)
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        links, self._links = self._links, []
        for link in links:
            link.connection.close()
        for link in links:
            await link.connection.wait_closed()
        self._notify()


def _with_argument(command: str, argument: str) -> str:
    return f"{command} {shlex.quote(argument)}" if argument else command


def _link_gone(link: Link, error: asyncssh.ChannelOpenError) -> bool:
    """asyncssh reports a connection that closed under a channel open as a failed
    open too (with the code OpenSSH uses for "no more sessions"): only an open
    refused on a connection that is still up is sshd saying "no more"."""
    return link.closed or error.reason == "SSH connection closed"
