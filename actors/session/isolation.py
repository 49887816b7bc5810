"""Isolation per subagent (docs/isolation.md): a git worktree, or a container, of
its own.

``worktree``: the parent's environment runs git (Troupe's safe git: no hooks, no
fsmonitor, no pager, no signing program) to add a worktree of the parent's
repository at ``<repository>/.troupe/worktrees/<child session id>`` on the branch
``troupe/<child session id>``, starting at the parent's ``HEAD``; the ignored files
the user lists (``worktree_copy``) are copied in. The child sees the parent's
environment through a :class:`~environments.wrappers.ScopedEnvironment` rooted in
its worktree, so the policy's path checks and the sandbox's writable root are the
worktree: nothing changes in the policy, only the root it is given. Works on every
environment that runs commands (local, SSH) since it only runs git there (the
scripts: :mod:`actors.session.worktree_git`).

When the child is closed, what it left uncommitted is committed on its branch (by
Troupe, hooks off), the branch is merged into the parent's branch if the spawn
asked for it, and the worktree is removed. The branch stays when it holds commits
of its own that are not merged (left for review); a branch with nothing of its
own is deleted. A branch with unmerged work is never deleted.

``container``: a new Docker environment from the image (``isolation_image``) with
its own copy of the parent's workspace (``copy_workspace``), its own actor under
the parent; closing the child stops the actor, which removes the container.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Awaitable, Callable

import msgspec
import trio

from actors.kernel import Actor, ActorRef
from actors.session.worktree_git import (
    CopyRefused,
    check_copy,
    close_script,
    create_script,
)
from actors.tools.registry import ToolFailure
from environments.wrappers import ScopedEnvironment
from protocol.environment import Describe, EnvironmentInfo, ExecCommand, ExecResult, Initialize
from protocol.session import Isolation

BRANCH_PREFIX = "troupe/"
GIT_TIMEOUT_MS = 120_000
CONTAINER_OWNER = "isolation"
"""The owner label of isolation containers (the orphan sweep's key)."""
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

Spawner = Callable[[Actor, str], Awaitable[ActorRef]]
"""Starts an actor as a child of the parent session under a name."""
Stopper = Callable[[ActorRef], Awaitable[None]]
"""Stops one of the parent session's children and waits until it has stopped."""


class IsolationError(ToolFailure):
    """An isolated workspace could not be made (the model reads why)."""


class Workspace(msgspec.Struct):
    """An isolated subagent's own place: the environment it works in, and what
    must be undone when it closes."""

    isolation: Isolation
    environment: ActorRef
    """The child's environment (a scoped view of the parent's, or a container)."""
    owned: ActorRef
    """The actor to stop when the child closes (the view or the container)."""
    path: str
    """The worktree (or the workspace's path inside the container)."""
    branch: str = ""
    base: str = ""
    """The commit the branch started at."""
    gitdir: str = ""
    """The worktree's own git directory, as git made it (used at close instead of
    the worktree's ``.git`` file)."""
    top_gitdir: str = ""
    """The git directory of ``top`` when ``top`` is itself a worktree of ours (a
    subagent's subagent); empty: ``top`` is the user's own checkout."""
    top: str = ""
    """The parent's repository top level (where a merge happens)."""
    container: str = ""
    merge: bool = False
    """Merge the branch into the parent's branch when the child closes."""
    closed: Closed | None = None
    """What closing it did (None while the child is open)."""

    def where(self) -> str:
        """Where the child's changes are, in words (its result and tool output)."""
        if self.isolation == "container":
            if self.closed is not None:
                return f"container {self.container[:12]} (removed)"
            return f"container {self.container[:12]} (workspace {self.path})"
        if self.closed is None:
            return f"worktree {self.path} on branch {self.branch}"
        if self.closed.state == "kept":
            return f"branch {self.branch} (worktree removed; the branch is kept for review)"
        if self.closed.state == "merged":
            return f"merged into the parent's branch (branch {self.branch} deleted)"
        return f"no changes (worktree and branch {self.branch} removed)"


class Closed(msgspec.Struct, frozen=True):
    """What closing a workspace did: ``state`` as in ``SubagentWorkspaceEvent``."""

    state: str
    detail: str = ""


async def _run(environment: ActorRef, script: str) -> ExecResult:
    result = await environment.ask(
        ExecCommand(script, timeout_ms=GIT_TIMEOUT_MS), timeout=GIT_TIMEOUT_MS / 1000 + 30
    )
    assert isinstance(result, ExecResult)
    return result


class Isolator:
    """Makes and undoes one session's isolated workspaces. Git calls on one
    repository are one at a time (a worktree's add and removal touch shared files
    of the repository)."""

    def __init__(
        self, environment: ActorRef, spawn: Spawner, stop: Stopper, own: Workspace | None = None
    ) -> None:
        """``own``: the session's own worktree when it is an isolated subagent (its
        subagents' worktrees are made from it without trusting its ``.git`` file)."""
        self.environment = environment
        self.spawn = spawn
        self.stop = stop
        self.own = own if own is not None and own.isolation == "worktree" else None
        self._git_lock = trio.Lock()

    async def open(
        self,
        isolation: Isolation,
        child_id: str,
        agent_id: str,
        *,
        copies: list[str],
        image: str | None,
        merge: bool,
    ) -> Workspace:
        if not _SAFE_NAME.match(child_id):
            raise IsolationError(f"cannot name a workspace after {child_id!r}")
        if isolation == "worktree":
            return await self._worktree(child_id, agent_id, copies, merge)
        return await self._container(agent_id, image)

    async def _worktree(
        self, child_id: str, agent_id: str, copies: list[str], merge: bool
    ) -> Workspace:
        try:
            checked = [check_copy(path) for path in copies]
        except CopyRefused as error:
            raise IsolationError(str(error)) from None
        branch = BRANCH_PREFIX + child_id
        own = (self.own.gitdir, self.own.path) if self.own is not None else ("", "")
        async with self._git_lock:
            script = create_script(child_id, branch, checked, *own)
            result = await _run(self.environment, script)
        if result.exit_code != 0:
            reason = (result.stderr or result.stdout).strip()[-400:]
            if "not a git repository" in reason:
                reason = "the working directory is not in a git repository"
            raise IsolationError(f"cannot make a worktree for {agent_id}: {reason}")
        path, prefix, base, gitdir = [*result.stdout.split("\0"), "", "", "", ""][:4]
        top = posixpath.dirname(posixpath.dirname(posixpath.dirname(path)))
        workdir = posixpath.normpath(posixpath.join(path, prefix)) if prefix else path
        try:
            view = await self.spawn(
                ScopedEnvironment(self.environment, workdir), f"scopes/{agent_id}"
            )
        except BaseException:
            env = self.environment
            await self._close_worktree(
                Workspace(
                    "worktree",
                    env,
                    env,
                    path,
                    branch=branch,
                    base=base,
                    gitdir=gitdir,
                    top=top,
                    top_gitdir=own[0],
                ),
                "",
            )
            raise
        return Workspace(
            "worktree", view, view, path, branch=branch, base=base, gitdir=gitdir, top=top,
            top_gitdir=own[0], merge=merge,
        )  # fmt: skip

    async def _container(self, agent_id: str, image: str | None) -> Workspace:
        from environments.docker.environment import DockerEnvironment

        if not image:
            raise IsolationError(
                "container isolation needs an image: set isolation_image (troupe run "
                "--environment docker:IMAGE sets it to IMAGE)"
            )
        info = await self.environment.ask(Describe(), timeout=60)
        assert isinstance(info, EnvironmentInfo)
        workspace = info.working_directory
        if not await trio.to_thread.run_sync(os.path.isdir, workspace):
            raise IsolationError(
                f"container isolation copies the workspace from this machine; {workspace} "
                "is not a directory here"
            )
        environment = DockerEnvironment(
            image, workspace=workspace, copy_workspace=True, owner=CONTAINER_OWNER
        )
        ref = await self.spawn(environment, f"containers/{agent_id}")
        try:
            await ref.ask(Initialize(), timeout=300)  # creates the container now
        except BaseException:
            with trio.CancelScope(shield=True):
                await self.stop(ref)
            raise
        return Workspace("container", ref, ref, workspace, container=environment.container or "")

    async def close(self, workspace: Workspace, message: str) -> Closed:
        """Undo ``workspace`` once its child has stopped (see the module docstring):
        the container is removed with its actor; the worktree is committed, merged
        on request and removed, its branch kept when it holds work of its own."""
        await self.stop(workspace.owned)
        if workspace.isolation == "container":
            closed = Closed("removed")
        else:
            closed = await self._close_worktree(workspace, message)
        workspace.closed = closed
        return closed

    async def _close_worktree(self, workspace: Workspace, message: str) -> Closed:
        """Shielded: a close that is cancelled halfway would leave a worktree whose
        work is neither committed nor kept track of."""
        result: ExecResult | None = None
        with trio.CancelScope(shield=True):
            async with self._git_lock:
                result = await _run(self.environment, close_script(workspace, message))
        assert result is not None
        lines = result.stdout.splitlines()
        state = lines[0] if lines and lines[0] in ("kept", "merged", "removed") else "kept"
        detail = lines[1] if len(lines) > 1 else ""
        if result.exit_code != 0 and not detail:
            detail = (result.stderr.strip()[-300:]) or f"git exited with {result.exit_code}"
        return Closed(state, detail)
