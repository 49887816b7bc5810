"""CommandEnvironment: an environment made of a command runner and a byte mover.

A kind that can run a command (to its end, or streaming its output) and put a
file's bytes somewhere gets everything else from this base: reading, writing,
listing, deleting and checking files, path resolution, grep and glob, the wrapped
command with its process group (timeout, abort, deltas), persistent terminals and
``describe``, all as POSIX shell run through those primitives. A kind implements:

- :meth:`run`: run an argv to its end as the environment's user (short helpers);
- :meth:`stream`: start an argv and yield its output as it arrives
  (:class:`~environments.command_run.CommandStream`);
- :meth:`upload`: put bytes into a file of a directory, owned by a user;
- :meth:`sandbox_state`: what confines its commands.

Docker is one (``environments/docker``); a Kubernetes pod would be another (pods/exec
and the archive stream; see docs/decisions.md). Paths the policy judged
(``guard``) are checked by a shell script just before use: without python3 on the
other side the window is narrower than locally, and the target is the boundary.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import secrets
import shlex
import tarfile

import msgspec

from environments.base import EnvironmentActor
from environments.capture import DEFAULT_CAPTURE_CAP
from environments.command_run import CommandStream, Lost, new_markers, run_command, script
from environments.command_terminal import CommandTerminals
from environments.envvars import EnvPolicy, restricted_to
from environments.errors import (
    FileNotFound,
    InvalidRequest,
    NotADirectory,
    NotAFile,
    PermissionDenied,
)
from environments.search import SKIPPED_DIRECTORIES, file_filter, glob_to_regex
from environments.shell import exact
from environments.shell.scripts import find_files_command, grep_command
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
    SandboxState,
    StatPath,
    TerminalOutput,
    WriteFile,
    WriteResult,
)

_STATUS_ERRORS = {
    3: FileNotFound,
    4: NotAFile,
    5: PermissionDenied,
    6: NotADirectory,
}
_READ = (
    'p=$1; [ -e "$p" ] || { echo "$p does not exist" >&2; exit 3; }; '
    '[ -d "$p" ] && { echo "$p is a directory" >&2; exit 4; }; '
    '[ -r "$p" ] || { echo "permission denied: $p" >&2; exit 5; }; exec cat -- "$p"'
)
_WRITE = (
    # In place (a hard link or the file's mode and owner stay), from the upload.
    "p=$1; t=$2; trap 'rm -f -- \"$t\"' EXIT; "
    '[ -d "$p" ] && { echo "$p is a directory" >&2; exit 4; }; '
    'mkdir -p -- "$(dirname -- "$p")" 2>/dev/null; '
    '[ -d "$(dirname -- "$p")" ] || { echo "cannot create the parent of $p" >&2; exit 5; }; '
    'cat -- "$t" > "$p" || { echo "permission denied: $p" >&2; exit 5; }'
)
UPLOADS = "/tmp"
"""Where a write's bytes land before they are copied in place by the user (an
upload may extract as another user and would replace a file, not write into it)."""
_DELETE = (
    'p=$1; [ -e "$p" ] || [ -L "$p" ] || { echo "$p does not exist" >&2; exit 3; }; '
    '[ -d "$p" ] && [ ! -L "$p" ] && { echo "$p is a directory" >&2; exit 4; }; '
    'rm -f -- "$p" || exit 5'
)
_KIND = (
    'p=$1; if [ -d "$p" ]; then echo directory; elif [ -f "$p" ]; then echo file; '
    'elif [ -e "$p" ] || [ -L "$p" ]; then echo other; else echo missing; fi'
)
_LIST = (
    'p=$1; [ -e "$p" ] || { echo "$p does not exist" >&2; exit 3; }; '
    '[ -d "$p" ] || { echo "$p is not a directory" >&2; exit 6; }; '
    'find "$p" -mindepth 1 -maxdepth "$2" -printf \'%y\\t%s\\t%P\\0\''
)


def tar_of(name: str, data: bytes, uid: int, gid: int, mode: int = 0o600) -> bytes:
    """A one-file tar archive (what archive APIs such as Docker's take)."""
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.uid, info.gid = len(data), mode, 0, uid, gid
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class CommandEnvironment(EnvironmentActor):
    """Files, search, commands and terminals over :meth:`run`, :meth:`stream` and
    :meth:`upload`; see the module's docstring."""

    gone_errors: tuple[type[Exception], ...] = ()
    """Errors of :meth:`run` that mean nothing runs there any more (a removed
    container): ending a process group there is then done already."""
    keepalive_interval = 5.0
    keepalive_count_max = 3
    """A running command's link is declared lost after this many missed probes
    (:meth:`alive`) this many seconds apart."""

    def __init__(
        self,
        working_dir: str,
        *,
        env_policy: EnvPolicy | None = None,
        capture_cap: int = DEFAULT_CAPTURE_CAP,
    ) -> None:
        self._working_dir = working_dir
        self.env_policy = env_policy or EnvPolicy()
        self.capture_cap = capture_cap
        self._uname: tuple[str, str] | None = None
        self._user_ids: tuple[int, int] | None = None
        self.terminals = CommandTerminals(self)
        self.lost = Lost()
        """Commands of a lost link, ended before anything else runs there."""

    # -- the primitives a kind implements

    async def run(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        """Run ``argv`` to its end as the environment's user: status, stdout, stderr."""
        raise NotImplementedError

    def stream(self, argv: list[str]) -> contextlib.AbstractAsyncContextManager[CommandStream]:
        """Start ``argv`` as the environment's user; its output as it arrives. An
        error raised on entry means the command did not start (safe to retry)."""
        raise NotImplementedError

    async def upload(self, directory: str, name: str, data: bytes, uid: int, gid: int) -> None:
        """Put ``data`` into ``directory/name``, owned by ``uid``:``gid``, mode 0600."""
        raise NotImplementedError

    def sandbox_state(self) -> SandboxState:
        raise NotImplementedError

    async def alive(self) -> bool | None:
        """Whether the far side answers now: a cheap probe, asked while commands run.
        A kind that does not override it has no probe (a hung link is not noticed)."""
        return None

    @property
    def where(self) -> str:
        """How errors name the place commands run (``container 1a2b3c``)."""
        return type(self).__name__

    # -- everything else, over them

    async def stop_terminals(self) -> None:
        """End every terminal's group (call from ``on_stop`` and ``cleanup``)."""
        await self.terminals.close_all()

    @property
    def kill_grace(self) -> float:
        """SIGTERM to SIGKILL for this environment's commands: the runtime's, as for
        local commands (2 s by default)."""
        return self.ctx.runtime.kill_grace

    async def settle(self) -> None:
        """End what a lost link left running (raises while it is still lost)."""
        await self.lost.settle(self.run, self.gone_errors, self.kill_grace)

    async def _script(self, text: str, *args: str) -> tuple[int, bytes, str]:
        await self.settle()
        status, out, err = await self.run(["bash", "-c", text, "troupe", *args])
        return status, out, err.decode(errors="replace").strip()

    async def _checked(self, text: str, *args: str) -> bytes:
        status, out, err = await self._script(text, *args)
        if status != 0:
            kind = _STATUS_ERRORS.get(status, InvalidRequest)
            raise kind(err[:300] or f"failed with status {status}")
        return out

    async def _guard(self, path: str, guard: PathGuard | None) -> None:
        """A guarded path is checked just before use (no link on the way, one hard
        link unless allowed)."""
        if guard is None:
            return
        status, _, _ = await self._script(exact.check_script(path, guard.hard_links))
        refused = exact.check_refusal(path, status)
        if refused is not None:
            raise refused

    def resolve(self, path: str | None) -> str:
        return posixpath.join(self._working_dir, path) if path else self._working_dir

    async def user_ids(self) -> tuple[int, int]:
        """The numeric user and group commands run as (for uploads they can read)."""
        if self._user_ids is None:
            uid, gid = (await self._checked("id -u; id -g")).decode().split()
            self._user_ids = (int(uid), int(gid))
        return self._user_ids

    async def read_file(self, request: ReadFile) -> FileContent:
        path = self.resolve(request.path)
        await self._guard(path, request.guard)
        data = await self._checked(_READ, path)
        return render_file(
            path,
            data,
            request.offset,
            request.limit,
            request.line_numbers,
            request.exact,
            images=request.images,
        )

    async def write_file(self, request: WriteFile) -> WriteResult:
        path = self.resolve(request.path)
        await self._guard(path, request.guard)
        uid, gid = await self.user_ids()
        data = request.content.encode()
        name = f".troupe-upload-{secrets.token_hex(8)}"
        await self.upload(UPLOADS, name, data, uid, gid)
        await self._checked(_WRITE, path, f"{UPLOADS}/{name}")
        return WriteResult(path, len(data))

    async def file_exists(self, request: FileExists) -> bool:
        status, _, _ = await self._script('[ -e "$1" ]', self.resolve(request.path))
        return status == 0

    async def stat_path(self, request: StatPath) -> PathKind:
        path = self.resolve(request.path)
        text = _KIND
        if request.guard is not None:  # the entry itself: a link there is "other"
            await self._guard(posixpath.dirname(path), PathGuard(hard_links=True))
            text = '[ -L "$1" ] && { echo other; exit 0; }; ' + _KIND
        kind = (await self._checked(text, path)).decode().strip()
        return kind if kind in ("file", "directory", "other") else "missing"  # type: ignore[return-value]

    async def resolve_path(self, request: ResolvePath) -> ResolvedPath:
        path = self.resolve(request.path)
        status, out, err = await self._script(exact.resolve_script(path, request.same_file_in))
        fields = out.decode(errors="replace").split("\0")
        resolved, home, entry, links = [*fields, "", "", "", ""][:4]
        if status != 0 or not resolved.startswith("/"):
            raise InvalidRequest(f"cannot resolve {path}: {err or 'realpath failed'}")
        count = int(links) if links.isdigit() else 0
        also_at = next((o for o in fields[4:] if o and o != resolved), None)
        entry = "/" + entry.lstrip("/") if entry.startswith("//") else entry
        return ResolvedPath(
            resolved, home or "/", count, also_at if count > 1 else None, entry or resolved
        )

    async def delete_file(self, request: DeleteFile) -> None:
        path = self.resolve(request.path)
        await self._guard(path, request.guard)
        await self._checked(_DELETE, path)

    async def list_directory(self, request: ListDirectory) -> list[DirEntry]:
        if request.depth < 1:
            raise InvalidRequest(f"depth must be 1 or more (got {request.depth})")
        root = self.resolve(request.path)
        await self._guard(root, request.guard)
        out = await self._checked(_LIST, root, str(request.depth))
        entries: list[DirEntry] = []
        for record in out.decode(errors="replace").split("\0"):
            if not record:
                continue
            kind, size, name = record.split("\t", 2)
            is_dir = kind == "d"
            entries.append(DirEntry(name, is_dir, None if is_dir else int(size)))
        entries.sort(key=lambda entry: entry.name.split("/"))
        return entries

    async def exec_command(self, request: ExecCommand) -> ExecResult:
        # The target is the sandbox: request.sandbox needs no bwrap inside it.
        cwd = self.resolve(request.working_dir)
        if request.argv:
            request = msgspec.structs.replace(request, command=shlex.join(request.argv))
        policy = restricted_to(self.env_policy, request.env_allowlist)
        markers = new_markers()
        await self.settle()
        probe = type(self).alive is not CommandEnvironment.alive
        return await run_command(
            self.stream(script(request, cwd, markers, policy, self.kill_grace)),
            self.run,
            request,
            markers,
            self.capture_cap,
            cwd,
            self.gone_errors,
            self.where,
            self.lost,
            self._alive if probe else None,
            (self.keepalive_interval, self.keepalive_count_max),
            self.kill_grace,
        )

    async def _alive(self) -> bool:
        return bool(await self.alive())

    async def run_in_terminal(self, request: RunInTerminal) -> TerminalOutput:
        policy = restricted_to(self.env_policy, request.env_allowlist)
        return await self.terminals.run(
            request.terminal_id, request.command, request.timeout_ms,
            self.resolve(None), policy, request.env_allowlist,
        )  # fmt: skip

    async def close_terminal(self, request: CloseTerminal) -> bool:
        return await self.terminals.close(request.terminal_id)

    async def grep(self, request: Grep) -> GrepResult:
        file_filter(request.glob_filter)
        root = self.resolve(request.path)
        status, _, _ = await self._script('[ -e "$1" ]', root)
        if status != 0:
            raise FileNotFound(f"{root} does not exist")
        command = grep_command(request.pattern, root, request.glob_filter, request.case_insensitive)
        status, out, err = await self._script(command)
        if status > 1:
            raise InvalidRequest(err or f"grep failed with status {status}")
        lines = out.decode(errors="replace").splitlines()
        truncated = len(lines) > request.max_results
        lines = lines[: request.max_results]
        return GrepResult("\n".join(lines), len(lines), truncated)

    async def glob(self, request: Glob) -> GlobResult:
        matcher = glob_to_regex(request.pattern)
        root = self.resolve(request.path)
        status, _, _ = await self._script('[ -d "$1" ]', root)
        if status != 0:
            raise FileNotFound(f"{root} is not a directory")
        status, out, err = await self._script(find_files_command(root, SKIPPED_DIRECTORIES))
        text = out.decode(errors="replace")
        if status != 0 and not text:
            raise InvalidRequest(err or f"find failed with status {status}")
        found: list[tuple[float, str]] = []
        for line in text.splitlines():
            mtime, _, path = line.partition("\t")
            if matcher.match(posixpath.relpath(path, root)):
                found.append((float(mtime), path))
        found.sort(key=lambda item: (-item[0], item[1]))
        return GlobResult([path for _, path in found])

    async def describe(self) -> EnvironmentInfo:
        if self._uname is None:
            _, out, _ = await self._script("uname -s; uname -r")
            system, _, release = out.decode(errors="replace").partition("\n")
            self._uname = (system.strip().lower(), release.strip())
        return EnvironmentInfo(self._working_dir, *self._uname, self.sandbox_state())


__all__ = ["CommandEnvironment", "CommandStream", "tar_of"]
