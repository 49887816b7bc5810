"""LocalEnvironment: the tools run on this machine (coding-agent-loop-spec §4.2).

File work runs in worker threads so that no request blocks the event loop; commands
run through :mod:`environments.local_exec`.
"""

from __future__ import annotations

import errno
import logging
import os
import platform
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import trio

from actors.kernel.processes import ProcessLedger
from environments import nofollow
from environments.base import EnvironmentActor
from environments.capture import DEFAULT_CAPTURE_CAP
from environments.envvars import EnvPolicy, command_environment, restricted_to
from environments.errors import (
    EnvironmentError_,
    FileNotFound,
    FileSystemError,
    HardLinkRefused,
    InvalidPath,
    InvalidRequest,
    LinkInPath,
    NotADirectory,
    NotAFile,
    PermissionDenied,
)
from environments.local_exec import exit_status, run_local_command
from environments.local_terminal import LocalTerminals
from environments.sandbox import (
    find_bwrap,
    launched,
    local_facts,
    probe_local,
    sandboxed_argv,
    spec_paths,
)
from environments.search import glob_local, grep_python
from environments.textfiles import render_file
from protocol.environment import (
    CloseTerminal,
    DeleteFile,
    DirEntry,
    EnvironmentInfo,
    ExecCommand,
    ExecResult,
    FileContent,
    FileExists,
    Glob,
    GlobResult,
    Grep,
    GrepResult,
    ListDirectory,
    PathGuard,
    PathKind,
    ReadFile,
    ResolvedPath,
    ResolvePath,
    RunInTerminal,
    Sandbox,
    SandboxState,
    StatPath,
    TerminalOutput,
    WriteFile,
    WriteResult,
)

T = TypeVar("T")

log = logging.getLogger("troupe.environments")


async def _in_thread(path: Path, work: Callable[[], T], guarded: bool = False) -> T:
    """Run blocking file work off the event loop, turning OS errors into refusals.
    ``guarded``: the path was judged link-free, so a link met on the way means it
    changed since the check."""
    try:
        return await trio.to_thread.run_sync(work)
    except nofollow.HardLinked as error:
        raise HardLinkRefused(
            f"{path} {error.strerror}: its other names may be outside the working "
            "directory (the user must approve using it)"
        ) from None
    except OSError as error:
        if guarded and error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkInPath(
                f"{path}: a symbolic link (or a non-directory) is now in the path "
                "that was checked; refused rather than followed"
            ) from None
        raise os_refusal(path, error) from None
    except ValueError as error:  # "embedded null byte" and the like
        raise InvalidPath(f"invalid path {str(path)[:200]!r}: {error}") from None


def os_refusal(path: Path | str, error: OSError) -> EnvironmentError_:
    """The typed refusal for any OSError: nothing the OS says may fail the actor."""
    shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
    match error:
        case FileNotFoundError():
            return FileNotFound(f"{shown} does not exist")
        case IsADirectoryError():
            return NotAFile(f"{shown} is a directory")
        case NotADirectoryError() | FileExistsError():
            return NotADirectory(f"{shown}: a parent is not a directory")
        case PermissionError():
            return PermissionDenied(f"permission denied: {shown}")
    if error.errno in (errno.ENAMETOOLONG, errno.ELOOP, errno.EINVAL, errno.EILSEQ):
        return InvalidPath(f"{shown}: {error.strerror or error}")
    return FileSystemError(f"{shown}: {error.strerror or error}")


def _list(root: Path, depth: int) -> list[DirEntry]:
    if not root.is_dir():
        raise NotADirectoryError(root)
    entries: list[DirEntry] = []

    def visit(directory: Path, level: int) -> None:
        for child in sorted(directory.iterdir(), key=lambda p: p.name):
            info = child.lstat()
            is_dir = stat.S_ISDIR(info.st_mode)
            name = child.relative_to(root).as_posix()
            entries.append(DirEntry(name, is_dir, None if is_dir else info.st_size))
            if is_dir and level < depth:
                visit(child, level + 1)

    visit(root, 1)
    return entries


def _resolved(path: Path, same_file_in: tuple[str, ...]) -> ResolvedPath:
    """``realpath`` of ``path`` and, for a regular file, its hard-link count and
    (when it has other names) the first of them found under ``same_file_in``."""
    real = os.path.realpath(path)
    home = os.path.expanduser("~")
    entry = _entry(str(path), real)
    try:
        info = os.stat(real, follow_symlinks=False)
    except OSError:
        return ResolvedPath(real, home, entry=entry)
    if not stat.S_ISREG(info.st_mode):
        return ResolvedPath(real, home, entry=entry)
    also_at = None
    if info.st_nlink > 1:
        also_at = nofollow.other_name(info, real, same_file_in)
    return ResolvedPath(real, home, info.st_nlink, also_at, entry)


def _entry(path: str, real: str) -> str:
    """The entry ``path`` names: its parent resolved, its own name kept."""
    parent, name = os.path.split(path.rstrip("/"))
    if name in ("", ".", ".."):
        return real
    return os.path.join(os.path.realpath(parent or "."), name)


def _kind(path: Path) -> PathKind:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    if stat.S_ISREG(mode):
        return "file"
    return "directory" if stat.S_ISDIR(mode) else "other"


class LocalEnvironment(EnvironmentActor):
    """This machine, rooted at ``working_dir``.

    ``env_policy`` decides which variables commands inherit (secrets excluded by
    default); ``capture_cap`` bounds the bytes kept per output stream;
    ``use_ripgrep`` forces or forbids ripgrep (default: use it when installed);
    ``ledger`` records every command's process group so that a restarted host can
    end what a killed one left running.
    """

    def __init__(
        self,
        working_dir: str | os.PathLike[str],
        *,
        env_policy: EnvPolicy | None = None,
        capture_cap: int = DEFAULT_CAPTURE_CAP,
        use_ripgrep: bool | None = None,
        ledger: ProcessLedger | None = None,
    ) -> None:
        self.ledger = ledger
        self.terminals: LocalTerminals | None = None
        self.working_dir = Path(working_dir).resolve()
        self.env_policy = env_policy or EnvPolicy()
        self.capture_cap = capture_cap
        self.ripgrep = shutil.which("rg") if use_ripgrep is not False else None
        self.bwrap = find_bwrap()
        self.sandbox_state: SandboxState | None = None
        """Whether bwrap really runs here: probed once, on first need."""
        self._probing = trio.Lock()
        self._probe_started = False
        self._background = trio.CancelScope()
        self.said_unsandboxed = False
        if use_ripgrep and self.ripgrep is None:
            raise ValueError("use_ripgrep=True but ripgrep (rg) is not installed")

    def running_groups(self) -> frozenset[int]:
        """The process groups of the commands and terminals running now (each leads
        its own group and session): what the server checks a connecting process
        against, so that a command cannot answer its own session's approvals."""
        terminals = self.terminals.pids() if self.terminals is not None else []
        owned = self.ctx.process_groups if hasattr(self, "ctx") else frozenset()
        return frozenset((*owned, *terminals))

    def resolve(self, path: str | None) -> Path:
        """Absolute paths stay; relative ones are taken from the working directory."""
        return self.working_dir / path if path else self.working_dir

    async def initialize(self) -> None:
        await trio.to_thread.run_sync(lambda: self.working_dir.mkdir(parents=True, exist_ok=True))

    async def describe(self) -> EnvironmentInfo:
        place = await self.place()
        return EnvironmentInfo(
            place.working_directory, place.platform, place.os_version, await self.sandbox()
        )

    async def place(self) -> EnvironmentInfo:
        """Without the sandbox probe, which is started here in the background (if it
        has not run): a session asks this before its first model request, and the
        probe's answer is needed only by its first command, which waits for it."""
        if self.sandbox_state is None and not self._probe_started:
            self._probe_started = True
            self.ctx.nursery.start_soon(self._probe_in_background)
        return EnvironmentInfo(str(self.working_dir), platform.system().lower(), platform.release())

    async def _probe_in_background(self) -> None:
        with self._background:  # a stopping environment needs no answer
            await self.sandbox()

    async def sandbox(self) -> SandboxState:
        """Whether commands can be sandboxed here (bwrap found and really runs)."""
        async with self._probing:
            if self.sandbox_state is None:
                self.sandbox_state = await probe_local(self.bwrap)
            return self.sandbox_state

    async def _confined(
        self, spec: Sandbox | None, argv: list[str], env: dict[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """``argv`` and ``env`` as the sandbox ``spec`` runs them (unchanged when
        there is none, or it is optional and cannot be had here)."""
        if spec is None:
            return argv, env
        state = await self.sandbox()
        wrapped = sandboxed_argv(
            self.bwrap, state, spec, argv, lambda s: local_facts(spec_paths(s), self.home)
        )
        if wrapped is argv:
            if not self.said_unsandboxed:
                self.said_unsandboxed = True
                log.warning("commands run without the OS sandbox: %s", state.reason)
            return argv, env
        return launched(wrapped), env

    @property
    def home(self) -> str:
        return os.path.expanduser("~")

    def _guarded(self, path: str, guard: PathGuard) -> Path:
        """A judged path must be the absolute, resolved one the policy judged."""
        if not path.startswith("/"):
            raise InvalidPath(f"a checked path must be absolute: {path[:200]!r}")
        return Path(path)

    async def read_file(self, request: ReadFile) -> FileContent:
        guard = request.guard
        if guard is not None:
            path = self._guarded(request.path, guard)
            data = await _in_thread(
                path, lambda: nofollow.read_file(request.path, guard.hard_links), True
            )
        else:
            path = self.resolve(request.path)
            data = await _in_thread(path, path.read_bytes)
        return render_file(
            str(path),
            data,
            request.offset,
            request.limit,
            request.line_numbers,
            request.exact,
            images=request.images,
        )

    async def write_file(self, request: WriteFile) -> WriteResult:
        data = request.content.encode()
        guard = request.guard
        if guard is not None:
            path = self._guarded(request.path, guard)
            await _in_thread(
                path, lambda: nofollow.write_file(request.path, data, guard.hard_links), True
            )
            return WriteResult(str(path), len(data))
        path = self.resolve(request.path)

        def write() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

        await _in_thread(path, write)
        return WriteResult(str(path), len(data))

    async def file_exists(self, request: FileExists) -> bool:
        path = self.resolve(request.path)
        return await _in_thread(path, path.exists)

    async def stat_path(self, request: StatPath) -> PathKind:
        if request.guard is not None:
            path = self._guarded(request.path, request.guard)
            found = await _in_thread(path, lambda: nofollow.kind(request.path), True)
            return found  # type: ignore[return-value]
        path = self.resolve(request.path)
        return await _in_thread(path, lambda: _kind(path))

    async def resolve_path(self, request: ResolvePath) -> ResolvedPath:
        path = self.resolve(request.path)
        return await _in_thread(path, lambda: _resolved(path, request.same_file_in))

    async def delete_file(self, request: DeleteFile) -> None:
        guard = request.guard
        if guard is not None:
            path = self._guarded(request.path, guard)
            await _in_thread(
                path, lambda: nofollow.delete_file(request.path, guard.hard_links), True
            )
            return
        path = self.resolve(request.path)

        def delete() -> None:
            if path.is_dir() and not path.is_symlink():
                raise IsADirectoryError(path)
            path.unlink()

        await _in_thread(path, delete)

    async def list_directory(self, request: ListDirectory) -> list[DirEntry]:
        if request.depth < 1:
            raise InvalidRequest(f"depth must be 1 or more (got {request.depth})")
        if request.guard is not None:
            path = self._guarded(request.path, request.guard)
            found = await _in_thread(
                path, lambda: nofollow.list_tree(request.path, request.depth), True
            )
            return [DirEntry(name, is_dir, size) for name, is_dir, size in found]
        path = self.resolve(request.path)
        return await _in_thread(path, lambda: _list(path, request.depth))

    async def exec_command(self, request: ExecCommand) -> ExecResult:
        policy = restricted_to(self.env_policy, request.env_allowlist)
        env = command_environment(policy, os.environ, request.env_vars)
        cwd = self.resolve(request.working_dir)
        argv = list(request.argv) if request.argv else ["bash", "-c", request.command]
        argv, env = await self._confined(request.sandbox, argv, env)
        return await run_local_command(
            self.ctx, request, cwd, env, self.capture_cap, self.ledger, argv
        )

    async def run_in_terminal(self, request: RunInTerminal) -> TerminalOutput:
        policy = restricted_to(self.env_policy, request.env_allowlist)
        env = command_environment(policy, os.environ, None)
        argv, env = await self._confined(request.sandbox, ["bash", "--noprofile", "--norc"], env)
        return await self._terminals().run(
            request.terminal_id,
            request.command,
            request.timeout_ms,
            self.working_dir,
            env,
            argv,
            (request.sandbox, request.env_allowlist),
        )

    async def close_terminal(self, request: CloseTerminal) -> bool:
        return await self._terminals().close(request.terminal_id)

    def _terminals(self) -> LocalTerminals:
        if self.terminals is None:
            self.terminals = LocalTerminals(self.ctx.runtime.kill_grace)
        return self.terminals

    async def on_stop(self) -> None:
        """Persistent terminals end with the environment, like every other process."""
        self._background.cancel()
        if self.terminals is not None:
            await self.terminals.close_all()
        await super().on_stop()

    async def grep(self, request: Grep) -> GrepResult:
        root = self.resolve(request.path)
        if not await _in_thread(root, root.exists):
            raise FileNotFound(f"{root} does not exist")
        if self.ripgrep is not None:
            return await self._ripgrep(root, request)
        matches, truncated = await _in_thread(
            root,
            lambda: grep_python(
                root,
                request.pattern,
                request.glob_filter,
                request.case_insensitive,
                request.max_results,
            ),
        )
        return GrepResult("\n".join(matches), len(matches), truncated)

    async def _ripgrep(self, root: Path, request: Grep) -> GrepResult:
        assert self.ripgrep is not None
        argv = [self.ripgrep, "--line-number", "--no-heading", "--with-filename", "--color=never"]
        if request.case_insensitive:
            argv.append("--ignore-case")
        if request.glob_filter:
            argv += ["--glob", request.glob_filter]
        argv += ["--regexp", request.pattern, "--", str(root)]
        done = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False)
        if exit_status(done.returncode) > 1:
            raise InvalidRequest(done.stderr.decode(errors="replace").strip() or "ripgrep failed")
        lines = done.stdout.decode(errors="replace").splitlines()
        truncated = len(lines) > request.max_results
        lines = lines[: request.max_results]
        return GrepResult("\n".join(lines), len(lines), truncated)

    async def glob(self, request: Glob) -> GlobResult:
        root = self.resolve(request.path)
        if not await _in_thread(root, root.is_dir):
            raise FileNotFound(f"{root} is not a directory")
        return GlobResult(await _in_thread(root, lambda: glob_local(root, request.pattern)))
