"""SSHEnvironment, a remote host as an execution environment.

File operations go over SFTP; commands, grep and glob run through the remote
wrapper. Paths are POSIX paths on the remote host, relative ones taken from the
working directory (the login's home unless configured).
"""

from __future__ import annotations

import base64
import logging
import posixpath
import shlex
from typing import Any

import msgspec
import trio

from actors.kernel import KILL_GRACE
from actors.kernel.processes import ProcessLedger
from environments.base import EnvironmentActor
from environments.capture import DEFAULT_CAPTURE_CAP
from environments.envvars import EnvPolicy, restricted_to
from environments.errors import FileNotFound, InvalidPath, InvalidRequest, SandboxUnavailable
from environments.sandbox import (
    PROBE_SCRIPT,
    bwrap_argv,
    facts_script,
    parse_facts,
    parse_probe,
    refusal,
    spec_paths,
)
from environments.search import SKIPPED_DIRECTORIES, file_filter, glob_to_regex
from environments.shell import exact
from environments.shell.scripts import find_files_command, grep_command
from environments.ssh import sftp
from environments.ssh.asyncio_loop import AsyncioLoop
from environments.ssh.connect import ConnectOptions
from environments.ssh.pool import HostPool
from environments.ssh.remote_exec import run_remote_command
from environments.ssh.target import SSHTarget
from environments.ssh.terminal import SSHTerminals
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

_FALLBACK = object()
"""The host has no python3: the guarded operation goes over SFTP after a check."""

_CLOSE_SLACK = 30.0
"""Seconds stopping may take beyond the kill grace: end every remote group (TERM,
grace, KILL, confirm), possibly over a fresh connection, then close the connections."""

log = logging.getLogger("troupe.environments")


class SSHEnvironment(EnvironmentActor):
    """One remote host. Spawned by :class:`~environments.ssh.bridge.SSHBridge`, which
    lends it the loop. Stopping it (or ``Cleanup``) ends every process group it
    started on the host before its connections close."""

    def __init__(
        self,
        bridge: AsyncioLoop,
        target: SSHTarget,
        options: ConnectOptions,
        *,
        working_dir: str | None = None,
        env_policy: EnvPolicy | None = None,
        capture_cap: int = DEFAULT_CAPTURE_CAP,
        ledger: ProcessLedger | None = None,
        kill_grace: float = KILL_GRACE,
    ) -> None:
        self.bridge = bridge
        self.pool = HostPool(target, options, ledger, kill_grace)
        self.terminals = SSHTerminals(bridge, lambda: self.pool)
        self.env_policy = env_policy or EnvPolicy()
        self.capture_cap = capture_cap
        self._working_dir = working_dir
        self._uname: tuple[str, str] | None = None
        self._sandbox: tuple[str | None, SandboxState] | None = None
        """The host's bwrap and whether it runs: probed once, on first need."""
        self._probing = trio.Lock()
        self.said_unsandboxed = False

    async def on_stop(self) -> None:
        await self.terminals.close_all()
        await self._close(self.pool)

    async def run_in_terminal(self, request: RunInTerminal) -> TerminalOutput:
        cwd = await self.working_dir()
        shell = await self._confined(request.sandbox, ["bash", "--noprofile", "--norc"])
        return await self.terminals.run(
            request.terminal_id,
            request.command,
            request.timeout_ms,
            cwd,
            shell,
            restricted_to(self.env_policy, request.env_allowlist),
            (request.sandbox, request.env_allowlist),
        )

    async def sandbox(self) -> SandboxState:
        """Whether the host's bwrap really confines a command there (one probe)."""
        return (await self._probe())[1]

    async def _probe(self) -> tuple[str | None, SandboxState]:
        async with self._probing:
            if self._sandbox is None:
                status, out, err = await self._helper(PROBE_SCRIPT)
                if status != 0:
                    state = SandboxState(False, f"the probe failed: {err.strip()[:200]}")
                    self._sandbox = (None, state)
                else:
                    self._sandbox = parse_probe(out)
            return self._sandbox

    async def _confined(self, spec: Sandbox | None, argv: list[str]) -> list[str]:
        """``argv`` wrapped in the host's bwrap with the same profile as locally
        (paths resolved there, ``~`` its HOME); unchanged without a sandbox or
        where an optional one cannot be had; refused where a required one cannot."""
        if spec is None:
            return argv
        bwrap, state = await self._probe()
        if bwrap is None or not state.available:
            if spec.required:
                raise SandboxUnavailable(refusal(state))
            if not self.said_unsandboxed:
                self.said_unsandboxed = True
                log.warning("%s: commands run without the OS sandbox: %s", self.pool.target,
                            state.reason)  # fmt: skip
            return argv
        paths = spec_paths(spec)
        status, out, err = await self._helper(facts_script(paths))
        if status != 0:
            raise InvalidRequest(f"cannot prepare the sandbox: {err.strip()[:200]}")
        return bwrap_argv(bwrap, spec, argv, parse_facts(paths, out))

    async def close_terminal(self, request: CloseTerminal) -> bool:
        return await self.terminals.close(request.terminal_id)

    async def working_dir(self) -> str:
        if self._working_dir is None:
            self._working_dir = await self.bridge.run(sftp.home_directory(self.pool))
        return self._working_dir

    async def resolve(self, path: str | None) -> str:
        base = await self.working_dir()
        return posixpath.join(base, path) if path else base

    async def _helper(self, script: str) -> tuple[int, str, str]:
        status, out, err = await self.bridge.run(self.pool.run(script))
        return status, out.decode(errors="replace"), err.decode(errors="replace")

    async def initialize(self) -> None:
        directory = await self.working_dir()
        status, _, err = await self._helper(f"mkdir -p -- {shlex.quote(directory)}")
        if status != 0:
            raise InvalidRequest(f"cannot create {directory}: {err.strip()}")

    async def cleanup(self) -> None:
        await self.terminals.close_all()
        old = self.pool
        self.pool = HostPool(old.target, old.options, old.ledger, old.kill_grace)
        await self._close(old)

    async def _close(self, pool: HostPool) -> None:
        # Shielded: the supervisor may cancel this actor after its grace period, and
        # the remote groups must still be ended; bounded, so a dead host cannot hang it.
        with trio.CancelScope(shield=True), trio.move_on_after(pool.kill_grace + _CLOSE_SLACK):
            await self.bridge.run(pool.close(pool.kill_grace))

    async def describe(self) -> EnvironmentInfo:
        if self._uname is None:
            _, out, _ = await self._helper("uname -s; uname -r")
            system, _, release = out.partition("\n")
            self._uname = (system.strip().lower(), release.strip())
        return EnvironmentInfo(await self.working_dir(), *self._uname, await self.sandbox())

    async def _exact(self, op: str, path: str, guard: PathGuard, **extra: Any) -> Any:
        """A guarded operation, run on the host with no link followed; None when
        the host has no python3 (after the check-before-use fallback passed)."""
        if not path.startswith("/"):
            raise InvalidPath(f"a checked path must be absolute: {path[:200]!r}")
        status, out, err = await self._helper(exact.program(op, path, guard.hard_links, **extra))
        if status != exact.NO_PYTHON:
            return exact.answer(path, status, out, err)
        status, _, _ = await self._helper(exact.check_script(path, guard.hard_links))
        refused = exact.check_refusal(path, status)
        if refused is not None:
            raise refused
        return _FALLBACK

    async def read_file(self, request: ReadFile) -> FileContent:
        path = await self.resolve(request.path)
        data: bytes | None = None
        if request.guard is not None:
            found = await self._exact("read", path, request.guard)
            if found is not _FALLBACK:
                data = base64.b64decode(found)
        if data is None:
            data = await self.bridge.run(sftp.read_bytes(self.pool, path))
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
        path = await self.resolve(request.path)
        data = request.content.encode()
        if request.guard is not None:
            encoded = base64.b64encode(data).decode()
            if await self._exact("write", path, request.guard, data=encoded) is not _FALLBACK:
                return WriteResult(path, len(data))
        await self.bridge.run(sftp.write_bytes(self.pool, path, data))
        return WriteResult(path, len(data))

    async def file_exists(self, request: FileExists) -> bool:
        return await self.bridge.run(sftp.exists(self.pool, await self.resolve(request.path)))

    async def stat_path(self, request: StatPath) -> PathKind:
        path = await self.resolve(request.path)
        if request.guard is not None:
            found = await self._exact("kind", path, PathGuard(hard_links=True))
            if found is not _FALLBACK:
                return found
        return await self.bridge.run(sftp.path_kind(self.pool, path))

    async def resolve_path(self, request: ResolvePath) -> ResolvedPath:
        """Resolved on the host (``realpath -m``: symlinks followed, a missing tail
        kept), where the file the policy judges really is."""
        path = await self.resolve(request.path)
        status, out, err = await self._helper(exact.resolve_script(path, request.same_file_in))
        fields = out.split("\0")
        resolved, home, entry, links = [*fields, "", "", "", ""][:4]
        others = fields[4:]
        if status != 0 or not resolved.startswith("/"):
            raise InvalidRequest(f"cannot resolve {path}: {err.strip() or 'realpath failed'}")
        count = int(links) if links.isdigit() else 0
        also_at = next((o for o in others if o and o != resolved), None)
        also_at = also_at if count > 1 else None
        entry = "/" + entry.lstrip("/") if entry.startswith("//") else entry
        return ResolvedPath(resolved, home or "/", count, also_at, entry or resolved)

    async def delete_file(self, request: DeleteFile) -> None:
        path = await self.resolve(request.path)
        guard = request.guard
        if guard is not None and await self._exact("delete", path, guard) is not _FALLBACK:
            return
        await self.bridge.run(sftp.delete_file(self.pool, path))

    async def list_directory(self, request: ListDirectory) -> list[DirEntry]:
        if request.depth < 1:
            raise InvalidRequest(f"depth must be 1 or more (got {request.depth})")
        root = await self.resolve(request.path)
        if request.guard is not None:
            found = await self._exact("list", root, request.guard, depth=request.depth)
            if found is not _FALLBACK:
                return [DirEntry(name, is_dir, size) for name, is_dir, size in found]
        return await self.bridge.run(sftp.list_tree(self.pool, root, request.depth))

    async def exec_command(self, request: ExecCommand) -> ExecResult:
        cwd = await self.resolve(request.working_dir)
        argv = list(request.argv) if request.argv else None
        if request.sandbox is not None:
            plain = argv or ["bash", "-c", request.command]
            wrapped = await self._confined(request.sandbox, plain)
            argv = wrapped if wrapped is not plain else argv
        if argv:  # the vector, each word quoted for the remote shell
            request = msgspec.structs.replace(request, command=shlex.join(argv))
        return await run_remote_command(
            self.bridge,
            self.pool,
            request,
            cwd,
            restricted_to(self.env_policy, request.env_allowlist),
            self.capture_cap,
        )

    async def grep(self, request: Grep) -> GrepResult:
        file_filter(request.glob_filter)  # refuse a malformed filter before going remote
        root = await self.resolve(request.path)
        if not await self.bridge.run(sftp.exists(self.pool, root)):
            raise FileNotFound(f"{root} does not exist")
        command = grep_command(request.pattern, root, request.glob_filter, request.case_insensitive)
        status, out, err = await self._helper(command)
        if status > 1:
            raise InvalidRequest(err.strip() or f"grep failed with status {status}")
        lines = out.splitlines()
        truncated = len(lines) > request.max_results
        lines = lines[: request.max_results]
        return GrepResult("\n".join(lines), len(lines), truncated)

    async def glob(self, request: Glob) -> GlobResult:
        matcher = glob_to_regex(request.pattern)
        root = await self.resolve(request.path)
        if not await self.bridge.run(sftp.is_directory(self.pool, root)):
            raise FileNotFound(f"{root} is not a directory")
        status, out, err = await self._helper(find_files_command(root, SKIPPED_DIRECTORIES))
        if status != 0 and not out:
            raise InvalidRequest(err.strip() or f"find failed with status {status}")
        found: list[tuple[float, str]] = []
        for line in out.splitlines():
            mtime, _, path = line.partition("\t")
            if matcher.match(posixpath.relpath(path, root)):
                found.append((float(mtime), path))
        found.sort(key=lambda item: (-item[0], item[1]))
        return GlobResult([path for _, path in found])


__all__ = ["SSHEnvironment"]
