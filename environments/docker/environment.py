"""DockerEnvironment: a container as an execution environment.

The container is created from an image on first use, with the workspace
bind-mounted at the same path inside (or copied in, a setting), as the chosen
user, under resource limits (CPUs, memory, pids) and with no network unless asked.
Commands run through the SSH kind's bash wrapper (their own process group, killed
by group); files are read with an exec and written through the archive API
(uploaded, then copied in place as the user); grep, glob and path resolution
reuse the SSH kind's scripts. The container is the sandbox: a command's filesystem
and network are the container's, so the OS sandbox (bwrap) is not used inside it.
Stopping the actor (runtime shutdown, removal from a server) or ``Cleanup``
removes the container; the next use creates a fresh one.
"""

from __future__ import annotations

import io
import logging
import posixpath
import secrets
import shlex
import tarfile
from typing import Any

import msgspec
import trio

from environments.base import EnvironmentActor
from environments.capture import DEFAULT_CAPTURE_CAP
from environments.docker.api import ContainerGone, DockerAPI, DockerError
from environments.docker.command import run_command
from environments.docker.labels import container_labels, remove_orphans
from environments.envvars import EnvPolicy, restricted_to
from environments.errors import (
    FileNotFound,
    InvalidRequest,
    NotADirectory,
    NotAFile,
    PermissionDenied,
)
from environments.search import SKIPPED_DIRECTORIES, file_filter, glob_to_regex
from environments.ssh import exact
from environments.ssh.scripts import find_files_command, grep_command
from environments.textfiles import render_file
from protocol.environment import (
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
    SandboxState,
    StatPath,
    WriteFile,
    WriteResult,
)

_REMOVE_BOUND = 30.0
log = logging.getLogger("troupe.environments")
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
_UPLOADS = "/tmp"
"""Where a write's bytes land (the container's own filesystem) before they are
copied in place by the user: the archive API extracts as root and replaces files."""
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


class DockerEnvironment(EnvironmentActor):
    """One container, created on first use and removed on stop or ``Cleanup``."""

    def __init__(
        self,
        image: str,
        *,
        workspace: str,
        copy_workspace: bool = False,
        working_dir: str | None = None,
        user: str | None = None,
        cpus: float | None = None,
        memory_bytes: int | None = None,
        pids_limit: int | None = 1024,
        network: str = "none",
        docker_host: str | None = None,
        owner: str = "default",
        env_policy: EnvPolicy | None = None,
        capture_cap: int = DEFAULT_CAPTURE_CAP,
    ) -> None:
        self.image = image
        self.workspace = workspace
        self.copy_workspace = copy_workspace
        """Copy the workspace into the container at creation instead of bind-mounting
        it: the container's changes stay in the container (an isolated copy)."""
        self._working_dir = working_dir or workspace
        self.user = user
        self.cpus = cpus
        self.memory_bytes = memory_bytes
        self.pids_limit = pids_limit
        self.network = network
        self.docker_host = docker_host
        self.owner = owner
        self.env_policy = env_policy or EnvPolicy()
        self.capture_cap = capture_cap
        self.container: str | None = None
        self._api: DockerAPI | None = None
        self._creating = trio.Lock()
        self._uname: tuple[str, str] | None = None
        self._swept = False
        self._user_ids: tuple[int, int] | None = None
        self._stopped = False
        """Set when the actor stops: no container is created after that (a request
        still in flight when the container is removed would otherwise make one
        that nothing removes)."""

    @property
    def api(self) -> DockerAPI:
        if self._api is None:
            self._api = DockerAPI(self.docker_host)
        return self._api

    def container_config(self) -> dict[str, Any]:
        host: dict[str, Any] = {
            "Binds": [] if self.copy_workspace else [f"{self.workspace}:{self.workspace}"],
            "NetworkMode": self.network,
            "Init": True,
            "AutoRemove": False,
        }
        if self.cpus:
            host["NanoCpus"] = int(self.cpus * 1e9)
        if self.memory_bytes:
            host["Memory"] = self.memory_bytes
        if self.pids_limit:
            host["PidsLimit"] = self.pids_limit
        return {
            "Image": self.image,
            "Cmd": ["sleep", "infinity"],
            "WorkingDir": self._working_dir,
            "Labels": container_labels(self.owner),
            "HostConfig": host,
            "NetworkDisabled": self.network == "none",
        }

    async def ensure_container(self) -> str:
        """The running container, created (and orphans of a crash swept) on first need."""
        async with self._creating:
            if self._stopped:
                raise ContainerGone("the Docker environment has stopped")
            if self.container is None:
                if not self._swept:
                    self._swept = True
                    await remove_orphans(self.api, self.owner)
                container = await self.api.create_container(self.container_config(), None)
                try:
                    await self.api.start_container(container)
                    if self.copy_workspace:
                        await self._copy_in(container)
                    if self._stopped:
                        raise ContainerGone("the Docker environment has stopped")
                except BaseException:
                    with trio.CancelScope(shield=True):
                        await self.api.remove_container(container)
                    raise
                self.container = container
            return self.container

    async def _copy_in(self, container: str) -> None:
        """The workspace's files, owned by the container's user, at the same path."""
        parent = posixpath.dirname(self.workspace.rstrip("/")) or "/"
        status, _, err = await self.api.run(container, ["mkdir", "-p", parent], user="0")
        if status != 0:
            raise InvalidRequest(f"cannot create {parent} in the container: {err[:200]!r}")
        status, out, _ = await self.api.run(container, ["sh", "-c", "id -u; id -g"], user=self.user)
        uid, gid = (int(word) for word in out.split()) if status == 0 else (0, 0)
        archive = await trio.to_thread.run_sync(_workspace_tar, self.workspace, uid, gid)
        await self.api.put_archive(container, parent, archive)

    async def _forget(self, container: str) -> None:
        """``container`` vanished under us (removed from outside, or its init ended):
        make sure it is gone, and let the next call create a fresh one."""
        async with self._creating:
            if self.container == container:
                self.container = None
        with trio.CancelScope(shield=True), trio.move_on_after(_REMOVE_BOUND):
            await self.api.remove_container(container)

    async def _remove(self) -> None:
        container, self.container = self.container, None
        if container is None:
            return
        with trio.CancelScope(shield=True), trio.move_on_after(_REMOVE_BOUND):
            try:
                await self.api.remove_container(container)
            except DockerError as error:  # the labels let the next start sweep it
                log.warning("container %s not removed: %s", container[:12], error)

    async def on_stop(self) -> None:
        # Shielded and bounded: the supervisor may cancel after its grace period.
        self._stopped = True
        await self._remove()
        if self._api is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(5):
                await self._api.aclose()

    async def initialize(self) -> None:
        await self.ensure_container()

    async def cleanup(self) -> None:
        await self._remove()

    async def _script(self, script: str, *args: str) -> tuple[int, bytes, str]:
        argv = ["bash", "-c", script, "troupe", *args]
        container = await self.ensure_container()
        try:
            status, out, err = await self.api.run(container, argv, user=self.user)
        except ContainerGone:
            await self._forget(container)
            container = await self.ensure_container()
            status, out, err = await self.api.run(container, argv, user=self.user)
        return status, out, err.decode(errors="replace").strip()

    async def _checked(self, script: str, *args: str) -> bytes:
        status, out, err = await self._script(script, *args)
        if status != 0:
            kind = _STATUS_ERRORS.get(status, InvalidRequest)
            raise kind(err[:300] or f"failed with status {status}")
        return out

    async def _guard(self, path: str, guard: PathGuard | None) -> None:
        """The image may have no python3, so a guarded path is checked just before
        use (no link on the way, one hard link unless allowed); inside a container
        that narrows the window, and the container is the boundary."""
        if guard is None:
            return
        status, _, _ = await self._script(exact.check_script(path, guard.hard_links))
        refused = exact.check_refusal(path, status)
        if refused is not None:
            raise refused

    def resolve(self, path: str | None) -> str:
        return posixpath.join(self._working_dir, path) if path else self._working_dir

    async def read_file(self, request: ReadFile) -> FileContent:
        path = self.resolve(request.path)
        await self._guard(path, request.guard)
        data = await self._checked(_READ, path)
        return render_file(
            path, data, request.offset, request.limit, request.line_numbers, request.exact
        )

    async def write_file(self, request: WriteFile) -> WriteResult:
        path = self.resolve(request.path)
        await self._guard(path, request.guard)
        uid, gid = await self._ids()
        data = request.content.encode()
        name = f".troupe-upload-{secrets.token_hex(8)}"
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime, info.uid, info.gid = len(data), 0o600, 0, uid, gid
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.addfile(info, io.BytesIO(data))
        container = await self.ensure_container()
        await self.api.put_archive(container, _UPLOADS, buffer.getvalue())
        await self._checked(_WRITE, path, f"{_UPLOADS}/{name}")
        return WriteResult(path, len(data))

    async def _ids(self) -> tuple[int, int]:
        """The numeric user and group commands run as (for uploads they can read)."""
        if self._user_ids is None:
            uid, gid = (await self._checked("id -u; id -g")).decode().split()
            self._user_ids = (int(uid), int(gid))
        return self._user_ids

    async def file_exists(self, request: FileExists) -> bool:
        status, _, _ = await self._script('[ -e "$1" ]', self.resolve(request.path))
        return status == 0

    async def stat_path(self, request: StatPath) -> PathKind:
        path = self.resolve(request.path)
        script = _KIND
        if request.guard is not None:  # the entry itself: a link there is "other"
            await self._guard(posixpath.dirname(path), PathGuard(hard_links=True))
            script = '[ -L "$1" ] && { echo other; exit 0; }; ' + _KIND
        kind = (await self._checked(script, path)).decode().strip()
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
        # The container is the sandbox: request.sandbox needs no bwrap inside it.
        cwd = self.resolve(request.working_dir)
        if request.argv:
            request = _with_command(request, shlex.join(request.argv))
        policy = restricted_to(self.env_policy, request.env_allowlist)
        container = await self.ensure_container()
        try:
            return await run_command(
                self.api, container, self.user, request, cwd, policy, self.capture_cap
            )
        except ContainerGone:  # raised before the command started: safe to run it again
            await self._forget(container)
            container = await self.ensure_container()
            return await run_command(
                self.api, container, self.user, request, cwd, policy, self.capture_cap
            )

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

    def sandbox_state(self) -> SandboxState:
        """A container with no network is the sandbox (filesystem and network both
        confined); one with a network confines only the filesystem, so the policy is
        told there is no sandbox and judges network use as it does unconfined."""
        if self.network == "none":
            return SandboxState(True, f"a Docker container of {self.image} with no network")
        return SandboxState(
            False, f"a Docker container of {self.image} on network {self.network!r}"
        )


def _workspace_tar(workspace: str, uid: int, gid: int) -> bytes:
    """A tar of ``workspace`` (named by its last component), every entry owned by
    ``uid``:``gid``; symbolic links are kept as links, never followed."""

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(workspace, arcname=posixpath.basename(workspace.rstrip("/")), filter=owned)
    return buffer.getvalue()


def _with_command(request: ExecCommand, command: str) -> ExecCommand:
    return msgspec.structs.replace(request, command=command)


__all__ = ["DockerEnvironment", "DockerError"]
