"""DockerEnvironment: a container as an execution environment.

The container is created from an image on first use, with the workspace
bind-mounted at the same path inside (or copied in, a setting), as the chosen
user, under resource limits (CPUs, memory, pids) and with no network unless asked.
It is a :class:`~environments.command_env.CommandEnvironment`: this module runs
commands through the Engine API's exec (each in its own process group, killed by
group) and moves bytes through its archive API; files, search and terminals come
from the base. The container is the sandbox: a command's filesystem and network
are the container's, so the OS sandbox (bwrap) is not used inside it. Stopping the
actor (runtime shutdown, removal from a server) or ``Cleanup`` removes the
container; the next use creates a fresh one.
"""

from __future__ import annotations

import io
import logging
import posixpath
import tarfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from environments.capture import DEFAULT_CAPTURE_CAP
from environments.command_env import CommandEnvironment, tar_of
from environments.command_run import CommandStream, Frames
from environments.docker.api import ContainerGone, DockerAPI, DockerError
from environments.docker.labels import container_labels, remove_orphans
from environments.envvars import EnvPolicy
from environments.errors import InvalidRequest
from protocol.environment import SandboxState

_REMOVE_BOUND = 30.0
log = logging.getLogger("troupe.environments")


class _Exec:
    """One started exec: its output frames, and its exit status from the daemon."""

    def __init__(self, frames: Frames, api: DockerAPI, exec_id: str) -> None:
        self.frames, self._api, self._exec_id = frames, api, exec_id

    async def status(self) -> int | None:
        status = (await self._api.exec_inspect(self._exec_id)).get("ExitCode")
        return status if isinstance(status, int) else None


class DockerEnvironment(CommandEnvironment):
    """One container, created on first use and removed on stop or ``Cleanup``."""

    gone_errors = (ContainerGone,)

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
        super().__init__(working_dir or workspace, env_policy=env_policy, capture_cap=capture_cap)
        self.image = image
        self.workspace = workspace
        self.copy_workspace = copy_workspace
        """Copy the workspace into the container at creation instead of bind-mounting
        it: the container's changes stay in the container (an isolated copy)."""
        self.user = user
        self.cpus = cpus
        self.memory_bytes = memory_bytes
        self.pids_limit = pids_limit
        self.network = network
        self.docker_host = docker_host
        self.owner = owner
        self.container: str | None = None
        self._api: DockerAPI | None = None
        self._creating = trio.Lock()
        self._swept = False
        self._stopping = False
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
            if self._stopping:
                raise DockerError("the Docker environment is stopping")
            if self.container is None:
                if not self._swept:
                    self._swept = True
                    await remove_orphans(self.api, self.owner)
                container = await self.api.create_container(self.container_config(), None)
                try:
                    await self.api.start_container(container)
                    if self.copy_workspace:
                        await self._copy_in(container)
                    if self._stopping:
                        raise DockerError("the Docker environment is stopping")
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

    async def on_start(self) -> None:
        self._stopping = False  # a restart in place serves again
        await super().on_start()

    async def on_stop(self) -> None:
        # Shielded and bounded: the supervisor may cancel after its grace period.
        # A container being made when the stop came is made (or given up) first, and
        # none is made after: either would outlive the environment.
        self._stopping = True
        with trio.CancelScope(shield=True), trio.move_on_after(_REMOVE_BOUND):
            async with self._creating:
                pass
        await self.terminals.close_all(kill=False)  # removing the container ends them
        await self._remove()
        if self._api is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(5):
                await self._api.aclose()

    async def initialize(self) -> None:
        await self.ensure_container()

    async def cleanup(self) -> None:
        await self.terminals.close_all(kill=False)
        await self._remove()

    @property
    def where(self) -> str:
        return f"container {self.container[:12]}" if self.container else "the container"

    async def run(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        container = await self.ensure_container()
        try:
            return await self.api.run(container, argv, user=self.user)
        except ContainerGone:
            await self._forget(container)
            container = await self.ensure_container()
            return await self.api.run(container, argv, user=self.user)

    @asynccontextmanager
    async def stream(self, argv: list[str]) -> AsyncIterator[CommandStream]:
        container = await self.ensure_container()
        try:
            exec_id = await self.api.exec_create(container, argv, user=self.user)
        except ContainerGone:  # before the command started: safe to make it again
            await self._forget(container)
            container = await self.ensure_container()
            exec_id = await self.api.exec_create(container, argv, user=self.user)
        async with self.api.exec_stream(exec_id) as frames:
            yield _Exec(frames, self.api, exec_id)

    async def alive(self) -> bool:
        return await self.api.ping()

    async def upload(self, directory: str, name: str, data: bytes, uid: int, gid: int) -> None:
        container = await self.ensure_container()
        await self.api.put_archive(container, directory, tar_of(name, data, uid, gid))

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


__all__ = ["DockerEnvironment", "DockerError"]
