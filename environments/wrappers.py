"""Environments that wrap another one (coding-agent-loop-spec §4.4).

A wrapper is an actor in front of the environment it wraps: it forwards each
request with no deadline of its own, so the caller's deadline governs, and a caller
that gives up cancels the wrapper's request, which abandons the inner request and
stops the inner work. Refusals of the inner environment pass through unchanged.
"""

from __future__ import annotations

import logging
import posixpath
import time

import msgspec

from actors.kernel import ActorError, ActorRef, Rejection
from environments.base import EnvironmentActor
from environments.errors import EnvironmentUnavailable, ReadOnly
from protocol.environment import (
    WRITE_REQUESTS,
    DeleteFile,
    Describe,
    EnvironmentInfo,
    EnvironmentRequest,
    ExecCommand,
    ExecResult,
    FileExists,
    Glob,
    Grep,
    ListDirectory,
    ReadFile,
    ResolvePath,
    StatPath,
    WriteFile,
)

log = logging.getLogger("troupe.environments")


class ForwardingEnvironment(EnvironmentActor):
    """Sends every request on to ``inner``; subclasses add behaviour around it."""

    def __init__(self, inner: ActorRef) -> None:
        self.inner = inner

    async def forward(self, request: EnvironmentRequest) -> object:
        try:
            return await self.inner.ask(request, timeout=None)
        except Rejection:
            raise
        except ActorError as exc:
            raise EnvironmentUnavailable(f"{self.inner.address}: {exc}") from None

    async def serve(self, request: EnvironmentRequest) -> object:
        return await self.forward(request)


class ReadOnlyEnvironment(ForwardingEnvironment):
    """Refuses writes. Commands still run: telling a command's intent apart from its
    effect is not possible in general, so the spec leaves exec allowed."""

    async def serve(self, request: EnvironmentRequest) -> object:
        if isinstance(request, WRITE_REQUESTS):
            raise ReadOnly("Write operations are disabled in read-only mode")
        return await self.forward(request)


class LoggingEnvironment(ForwardingEnvironment):
    """Logs every request, and each command's exit code and duration."""

    def __init__(self, inner: ActorRef, logger: logging.Logger | None = None) -> None:
        super().__init__(inner)
        self.log = logger or log

    async def serve(self, request: EnvironmentRequest) -> object:
        name = type(request).__name__
        if isinstance(request, ExecCommand):
            self.log.info("%s exec: %s", self.inner.address, request.command)
        else:
            self.log.info("%s %s", self.inner.address, name)
        started = time.monotonic()
        try:
            result = await self.forward(request)
        except Rejection as refusal:
            self.log.info("%s %s refused: %s", self.inner.address, name, refusal)
            raise
        if isinstance(result, ExecResult):
            self.log.info(
                "%s exit: %d in %dms%s",
                self.inner.address,
                result.exit_code,
                result.duration_ms,
                " (timed out)" if result.timed_out else "",
            )
        else:
            self.log.debug(
                "%s %s done in %.1f ms",
                self.inner.address,
                name,
                (time.monotonic() - started) * 1000,
            )
        return result


class ScopedEnvironment(ForwardingEnvironment):
    """The wrapped environment seen from a subdirectory: relative paths, commands'
    working directory and searches start there (absolute paths are left alone).

    A subagent told to work in ``pkg/`` gets this in front of its parent's
    environment: the same files and host, a different starting point."""

    def __init__(self, inner: ActorRef, subdirectory: str) -> None:
        super().__init__(inner)
        self.subdirectory = subdirectory

    def scoped(self, path: str | None) -> str:
        if path and posixpath.isabs(path):
            return path
        return posixpath.join(self.subdirectory, path) if path else self.subdirectory

    async def serve(self, request: EnvironmentRequest) -> object:
        match request:
            case Describe():
                info = await self.forward(request)
                assert isinstance(info, EnvironmentInfo)
                directory = posixpath.join(info.working_directory, self.subdirectory)
                return msgspec.structs.replace(
                    info, working_directory=posixpath.normpath(directory)
                )
            case ExecCommand():
                request = msgspec.structs.replace(
                    request, working_dir=self.scoped(request.working_dir)
                )
            case Grep() | Glob():
                request = msgspec.structs.replace(request, path=self.scoped(request.path))
            case (
                ReadFile()
                | WriteFile()
                | FileExists()
                | StatPath()
                | ResolvePath()
                | DeleteFile()
                | ListDirectory()
            ):
                request = msgspec.structs.replace(request, path=self.scoped(request.path))
        return await self.forward(request)
