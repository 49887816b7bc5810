"""EnvironmentActor: the ExecutionEnvironment interface as one actor.

Subclasses implement one coroutine per request; the base class routes requests to
them through a single concurrent handler, so a long command never blocks a file
read, and a caller that gives up (deadline, abort) cancels exactly its own request.
Consumers implement their own environments (Docker, Kubernetes, ...) the same way.
"""

from __future__ import annotations

from actors.kernel import Actor, RestartPolicy, handler
from environments.errors import InvalidPath, InvalidRequest
from protocol.environment import (
    Cleanup,
    CloseTerminal,
    DeleteFile,
    Describe,
    DirEntry,
    EnvironmentInfo,
    EnvironmentRequest,
    ExecCommand,
    ExecResult,
    FileContent,
    FileExists,
    Glob,
    GlobResult,
    Grep,
    GrepResult,
    Initialize,
    ListDirectory,
    PathKind,
    ReadFile,
    ResolvedPath,
    ResolvePath,
    RunInTerminal,
    StatPath,
    TerminalOutput,
    WriteFile,
    WriteResult,
)

_PATH_FIELDS = frozenset({"path", "working_dir"})


def refuse_nul_bytes(request: EnvironmentRequest) -> None:
    """No path, command, pattern or variable may hold a NUL byte (no OS call
    accepts one); file content may. Checked once here for every environment."""
    for name in request.__struct_fields__:
        if name == "content":
            continue
        value = getattr(request, name)
        texts = [*value.keys(), *value.values()] if isinstance(value, dict) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            kind = InvalidPath if name in _PATH_FIELDS else InvalidRequest
            raise kind(f"{name} contains a NUL byte")


class EnvironmentActor(Actor):
    """Base of every execution environment; override the coroutines below.

    Environments are shared by every session and client that uses them, so each
    restarts in place if it ever fails (its state kept; see
    :mod:`actors.kernel.restart`); bad requests are refused with typed errors.
    """

    restart_policy = RestartPolicy()

    @handler(
        ReadFile,
        WriteFile,
        FileExists,
        StatPath,
        ResolvePath,
        DeleteFile,
        ListDirectory,
        ExecCommand,
        RunInTerminal,
        CloseTerminal,
        Grep,
        Glob,
        Initialize,
        Cleanup,
        Describe,
        concurrent=True,
    )
    async def serve(self, request: EnvironmentRequest) -> object:
        refuse_nul_bytes(request)
        match request:
            case ReadFile():
                return await self.read_file(request)
            case WriteFile():
                return await self.write_file(request)
            case FileExists():
                return await self.file_exists(request)
            case StatPath():
                return await self.stat_path(request)
            case ResolvePath():
                return await self.resolve_path(request)
            case DeleteFile():
                return await self.delete_file(request)
            case ListDirectory():
                return await self.list_directory(request)
            case ExecCommand():
                return await self.exec_command(request)
            case RunInTerminal():
                return await self.run_in_terminal(request)
            case CloseTerminal():
                return await self.close_terminal(request)
            case Grep():
                return await self.grep(request)
            case Glob():
                return await self.glob(request)
            case Initialize():
                return await self.initialize()
            case Cleanup():
                return await self.cleanup()
            case Describe(sandbox=False):
                return await self.place()
            case Describe():
                return await self.describe()

    async def read_file(self, request: ReadFile) -> FileContent:
        raise NotImplementedError

    async def write_file(self, request: WriteFile) -> WriteResult:
        raise NotImplementedError

    async def file_exists(self, request: FileExists) -> bool:
        raise NotImplementedError

    async def stat_path(self, request: StatPath) -> PathKind:
        raise NotImplementedError

    async def resolve_path(self, request: ResolvePath) -> ResolvedPath:
        raise NotImplementedError

    async def delete_file(self, request: DeleteFile) -> None:
        raise NotImplementedError

    async def list_directory(self, request: ListDirectory) -> list[DirEntry]:
        raise NotImplementedError

    async def exec_command(self, request: ExecCommand) -> ExecResult:
        raise NotImplementedError

    async def run_in_terminal(self, request: RunInTerminal) -> TerminalOutput:
        raise InvalidRequest(f"{type(self).__name__} has no persistent terminal")

    async def close_terminal(self, request: CloseTerminal) -> bool:
        return False

    async def grep(self, request: Grep) -> GrepResult:
        raise NotImplementedError

    async def glob(self, request: Glob) -> GlobResult:
        raise NotImplementedError

    async def initialize(self) -> None:
        """Prepare the environment; the default has nothing to do."""

    async def cleanup(self) -> None:
        """Release what the environment holds; the default has nothing to do."""

    async def describe(self) -> EnvironmentInfo:
        raise NotImplementedError

    async def place(self) -> EnvironmentInfo:
        """:meth:`describe` for a caller that needs no sandbox state
        (``Describe(sandbox=False)``); the default is the whole description."""
        return await self.describe()
