"""asyncio side: connections to one host, the per-connection channel cap, processes.

Runs only on the bridge's asyncio loop. Each connection carries at most
``channels_per_connection`` command channels (default 8: sshd's default MaxSessions
is 10, and one session is kept for SFTP and one for killing a process group);
when every connection is full another is opened, up to ``max_connections``, and
then callers wait their turn. A connection that drops is forgotten; the next call
opens a new one, and the process groups it left running are ended from there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import asyncssh

from environments.errors import (
    AuthenticationFailed,
    ConnectionLost,
    HostKeyRejected,
    HostUnreachable,
)
from environments.ssh.scripts import kill_script
from environments.ssh.target import SSHTarget

REMOTE_SHELL = "exec bash --norc --noprofile -s"
"""What every channel runs: the wrapper comes on stdin. The login shell has already
sourced the user's startup files and exported their variables; a second sourcing
(bash does it for any shell sshd starts) would only cost time on every command."""

COMMAND_WINDOW = 256 * 1024
"""SSH receive window of a command channel. asyncssh's 2 MiB default lets a flood of
output pile up (it re-opens the window while its reader is paused); a smaller window
keeps a command's buffered output bounded without slowing loopback or LAN links."""

LINK_ERRORS = (asyncssh.Error, OSError, EOFError, asyncio.IncompleteReadError)


@dataclass(frozen=True)
class ConnectOptions:
    """How to reach and trust the host; empty tuples mean asyncssh's defaults
    (``~/.ssh/known_hosts``, ``~/.ssh/config``, the default identities)."""

    known_hosts: Any = ()
    client_keys: Any = ()
    config: Any = ()
    keepalive_interval: float = 15.0
    connect_timeout: float = 15.0
    channels_per_connection: int = 8
    max_connections: int = 16


@dataclass(eq=False)
class Link:
    """One SSH connection and the command channels open on it."""

    connection: asyncssh.SSHClientConnection
    active: int = 0
    sftp: asyncssh.SFTPClient | None = None

    @property
    def closed(self) -> bool:
        return self.connection.is_closed()


@dataclass(eq=False)
class RemoteProcess:
    """A command channel, and the link (slot) it holds until released."""

    link: Link
    process: asyncssh.SSHClientProcess[bytes]


def classify(error: BaseException, target: SSHTarget) -> Exception:
    """Turn an asyncssh or socket error into the environment's typed refusal."""
    if isinstance(error, asyncssh.HostKeyNotVerifiable):
        return HostKeyRejected(f"{target}: host key not trusted ({error}); check known_hosts")
    if isinstance(error, asyncssh.PermissionDenied):
        return AuthenticationFailed(f"{target}: authentication failed ({error})")
    if isinstance(error, asyncssh.ConnectionLost | asyncssh.DisconnectError | EOFError):
        return ConnectionLost(f"{target}: connection lost ({error or type(error).__name__})")
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return HostUnreachable(f"{target}: timed out connecting")
    return ConnectionLost(f"{target}: {type(error).__name__}: {error}")


@dataclass(eq=False)
class HostPool:
    target: SSHTarget
    options: ConnectOptions
    _links: list[Link] = field(default_factory=list)
    _orphans: set[int] = field(default_factory=set)
    _changed: asyncio.Condition | None = None
    _closed: bool = False

    @property
    def condition(self) -> asyncio.Condition:
        if self._changed is None:  # created on the loop that uses it
            self._changed = asyncio.Condition()
        return self._changed

    async def _connect(self) -> Link:
        target, options = self.target, self.options
        try:
            connection = await asyncio.wait_for(
                asyncssh.connect(
                    target.host,
                    port=target.port or (),
                    username=target.username or (),
                    known_hosts=options.known_hosts,
                    client_keys=options.client_keys,
                    config=options.config,
                    keepalive_interval=options.keepalive_interval,
                ),
                options.connect_timeout,
            )
        except asyncssh.HostKeyNotVerifiable as exc:
            raise classify(exc, target) from None
        except asyncssh.PermissionDenied as exc:
            raise classify(exc, target) from None
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise HostUnreachable(f"{target}: cannot connect: {exc}") from None
        link = Link(connection)
        if self._orphans:
            orphans, self._orphans = sorted(self._orphans), set()
            asyncio.get_running_loop().create_task(self._end_orphans(link, orphans))
        return link

    async def _end_orphans(self, link: Link, pgids: list[int]) -> None:
        try:
            await link.connection.run(REMOTE_SHELL, input=kill_script(pgids), timeout=30)
        except LINK_ERRORS:
            self._orphans.update(pgids)

    async def acquire(self) -> Link:
        """A link with a free command channel, opening a connection when all are full."""
        async with self.condition:
            while True:
                if self._closed:
                    raise ConnectionLost(f"{self.target}: environment closed")
                self._links = [link for link in self._links if not link.closed]
                for link in self._links:
                    if link.active < self.options.channels_per_connection:
                        link.active += 1
                        return link
                if len(self._links) < self.options.max_connections:
                    link = await self._connect()
                    link.active = 1
                    self._links.append(link)
                    return link
                await self.condition.wait()

    async def release(self, link: Link) -> None:
        async with self.condition:
            link.active -= 1
            self.condition.notify()

    async def start(self, script: str) -> RemoteProcess:
        """Open a channel running ``bash -s`` fed with ``script``."""
        link = await self.acquire()
        try:
            process = await link.connection.create_process(
                REMOTE_SHELL, encoding=None, window=COMMAND_WINDOW
            )
            process.stdin.write(script.encode())
            process.stdin.write_eof()
        except LINK_ERRORS as exc:
            await self.release(link)
            raise classify(exc, self.target) from None
        except BaseException:
            await self.release(link)
            raise
        return RemoteProcess(link, process)

    async def read(self, remote: RemoteProcess, stream: str, size: int) -> bytes:
        """Up to ``size`` bytes of stdout or stderr; b"" at end of stream."""
        reader = remote.process.stdout if stream == "stdout" else remote.process.stderr
        try:
            return await reader.read(size)
        except LINK_ERRORS:
            return b""

    async def finish(self, remote: RemoteProcess) -> None:
        """Close the channel and give its slot back."""
        try:
            remote.process.close()
        finally:
            await self.release(remote.link)

    async def remember_orphan(self, pgid: int) -> None:
        """A group we could not end because the link dropped: end it on reconnect."""
        self._orphans.add(pgid)

    async def run(self, script: str, timeout: float = 60.0) -> tuple[int, bytes, bytes]:
        """Run a short helper script to completion: (exit status, stdout, stderr)."""
        link = await self.acquire()
        try:
            result = await link.connection.run(
                REMOTE_SHELL, input=script.encode(), encoding=None, timeout=timeout
            )
        except asyncssh.TimeoutError as exc:
            raise HostUnreachable(f"{self.target}: helper command timed out: {exc}") from None
        except LINK_ERRORS as exc:
            raise classify(exc, self.target) from None
        finally:
            await self.release(link)
        status = result.exit_status if result.exit_status is not None else -1
        return status, _as_bytes(result.stdout), _as_bytes(result.stderr)

    async def sftp(self) -> asyncssh.SFTPClient:
        """The SFTP client of a live link (one per pool; it uses no command slot)."""
        for link in self._links:
            if link.sftp is not None and not link.closed:
                return link.sftp
        link = await self.acquire()
        try:
            link.sftp = await link.connection.start_sftp_client()
        except LINK_ERRORS as exc:
            raise classify(exc, self.target) from None
        finally:
            await self.release(link)
        return link.sftp

    async def close(self) -> None:
        self._closed = True
        for link in self._links:
            link.connection.close()
        for link in self._links:
            await link.connection.wait_closed()
        self._links.clear()
        async with self.condition:
            self.condition.notify_all()


def _as_bytes(output: str | bytes | None) -> bytes:
    """A completed process's output (asyncssh types it as text or bytes)."""
    if output is None:
        return b""
    return output.encode() if isinstance(output, str) else bytes(output)
