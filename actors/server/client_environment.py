"""A session's environment whose file reads and writes (and tools' commands) a
client serves.

It stands in front of the session's own environment (a wrapper, as a read-only
or scoped one does): the operations the client offered in ``create_session``
(``read_text_file``, ``write_text_file``, ``run_command``) go to the client
through its connection, everything else (searches, listings, path checks, the
session's own probes, such as its commands for the git snapshot and its reads of
instruction files and project configuration) to the environment. So an
editor's agent reads the unsaved buffer, the editor sees each write, and the
user watches commands in the editor's terminals, while the policy's checks,
which run in the session before any request reaches an environment, are
unchanged.

The client serves while it is connected. A call in flight when it goes fails
with ``client_unavailable``; later calls go to the environment, since with the
editor gone the disk is again the only copy of the files.
"""

from __future__ import annotations

import posixpath
import signal
import time

import msgspec

from actors.kernel import ActorRef, DeadActorError, UnknownAddressError
from actors.server.client_calls import ClientCallFailed, ServeOnClient
from environments.textfiles import render_file
from environments.wrappers import ForwardingEnvironment
from protocol.environment import (
    Describe,
    EnvironmentInfo,
    EnvironmentRequest,
    ExecCommand,
    ExecResult,
    FileContent,
    ReadFile,
    WriteFile,
    WriteResult,
    effective_timeout_ms,
    timeout_message,
)
from protocol.wire_client_calls import (
    ClientCallBody,
    ClientOperation,
    ReadTextFileCall,
    ReadTextFileResult,
    RunCommandCall,
    RunCommandResult,
    WriteTextFileCall,
)

OUTPUT_BYTE_LIMIT = 1 << 20
"""The output a client keeps of a command (the tool truncates it further)."""


def _exit_code(ran: RunCommandResult) -> int:
    """A shell's convention: 128 + N for a command signal N ended (-1: unknown)."""
    if ran.exit_code is not None:
        return ran.exit_code
    try:
        return 128 + signal.Signals[ran.signal or ""].value
    except KeyError:
        return -1


def _plain(request: ExecCommand) -> bool:
    """A command for the client's terminal: one a tool runs for the model (its
    output streams to the session; the session's own probes, such as the git
    snapshot, stay out of the user's terminals), with no OS sandbox, restricted
    variables or argument vector, which only the session's environment enforces."""
    return (
        request.output_to is not None
        and request.sandbox is None
        and request.env_allowlist is None
        and request.argv is None
    )


class ClientEnvironment(ForwardingEnvironment):
    """``inner`` with the ``served`` operations done by the client on ``connection``."""

    def __init__(
        self, inner: ActorRef, connection: ActorRef, served: frozenset[ClientOperation]
    ) -> None:
        super().__init__(inner)
        self.connection = connection
        self.served = served
        self.session_id = ""
        """The session the calls are for (set once the session is made)."""
        self.client_gone = False
        self._working_dir: str | None = None

    async def serve(self, request: EnvironmentRequest) -> object:
        match request:
            case ReadFile() if self._serves("read_text_file") and not request.probe:
                return await self._read(request)
            case WriteFile() if self._serves("write_text_file"):
                return await self._write(request)
            case ExecCommand() if self._serves("run_command") and _plain(request):
                return await self._run(request)
            case _:
                return await self.forward(request)

    def _serves(self, operation: ClientOperation) -> bool:
        return operation in self.served and not self.client_gone

    async def _absolute(self, path: str) -> str:
        """Clients are given absolute paths (ACP requires them)."""
        if self._working_dir is None:
            info = await self.forward(Describe())
            assert isinstance(info, EnvironmentInfo)
            self._working_dir = info.working_directory
        return posixpath.normpath(posixpath.join(self._working_dir, path))

    async def _read(self, request: ReadFile) -> object:
        path = await self._absolute(request.path)
        answer = await self._call(ReadTextFileCall(path))
        if answer is None:
            return await self.forward(request)
        try:
            content = msgspec.convert(answer, ReadTextFileResult).content
        except msgspec.ValidationError as error:
            raise ClientCallFailed(f"read_text_file {path}: a bad result: {error}") from None
        # The whole text is asked for and windowed here, so offsets, numbering, the
        # binary check and exact reads behave as they do on any environment.
        data = content.encode(errors="surrogatepass")
        rendered: FileContent = render_file(
            path,
            data,
            request.offset,
            request.limit,
            request.line_numbers,
            request.exact,
            images=request.images,
        )
        return rendered

    async def _write(self, request: WriteFile) -> object:
        path = await self._absolute(request.path)
        answer = await self._call(WriteTextFileCall(path, request.content))
        if answer is None:
            return await self.forward(request)
        return WriteResult(path, len(request.content.encode(errors="surrogatepass")))

    async def _run(self, request: ExecCommand) -> object:
        working_dir = await self._absolute(request.working_dir or ".")
        timeout_ms = effective_timeout_ms(request.timeout_ms)
        call = RunCommandCall(
            request.command, working_dir, timeout_ms, OUTPUT_BYTE_LIMIT, request.env_vars or {}
        )
        started = time.monotonic()
        answer = await self._call(call)
        if answer is None:
            return await self.forward(request)
        try:
            ran = msgspec.convert(answer, RunCommandResult)
        except msgspec.ValidationError as error:
            raise ClientCallFailed(f"run_command: a bad result: {error}") from None
        output = ran.output.rstrip("\n")
        if ran.timed_out:
            output = f"{output}\n{timeout_message(timeout_ms)}".lstrip("\n")
        elif ran.signal is not None:
            output = f"{output}\n[ended by {ran.signal}]".lstrip("\n")
        return ExecResult(
            stdout=output, stderr="", exit_code=_exit_code(ran), timed_out=ran.timed_out,
            duration_ms=int((time.monotonic() - started) * 1000),
        )  # fmt: skip

    async def _call(self, call: ClientCallBody) -> dict[str, object] | None:
        """The client's result; None once its connection has ended (then the
        environment serves this call and every later one)."""
        try:
            return await self.connection.ask(ServeOnClient(self.session_id, call), timeout=None)
        except (DeadActorError, UnknownAddressError):
            self.client_gone = True
            return None
