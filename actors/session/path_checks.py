"""The paths a call touches, resolved once by the environment and judged by the
policy's path lists (agent-loop-and-tool-system.md 6.4).

The model's path is never judged as written: the environment resolves it on its
own host (symlinks, ``..``), so a symlink to ``/etc`` inside the working directory
is ``/etc`` here. Writes must land inside the allowed paths; reads only stay out
of the denied ones (credentials), so looking at a system header still works. A
tool whose declaration says ``confined`` (a subagent's working directory) must
stay inside the working directory, whatever the policy allows.

The resolved paths are what the tool then uses (:class:`~actors.tools.paths.Clearance`);
the environment opens them without following links, so nothing changes between
this judgement and the use. A regular file with more than one hard link has
other names this check cannot see: the judge reports it, and the gate asks,
unless one of those names is in a denied path, which is refused outright.
"""

from __future__ import annotations

import msgspec

from actors.kernel import ActorRef
from actors.policy.engine import Policy
from actors.policy.paths import expand, path_refusal
from protocol.environment import ResolvedPath, ResolvePath

RESOLVE_TIMEOUT_S = 30.0


class PathVerdict(msgspec.Struct, frozen=True):
    """What the judge found: a refusal, or each path's resolved form and the paths
    that are hard links (their counts) for the gate to ask about."""

    refusal: str | None = None
    resolved: dict[str, str] = msgspec.field(default_factory=dict[str, str])
    hard_links: dict[str, int] = msgspec.field(default_factory=dict[str, int])
    entries: dict[str, str] = msgspec.field(default_factory=dict[str, str])
    """Each path's directory entry (parent resolved, name kept): what a delete removes."""

    def describe_hard_links(self) -> str:
        return "; ".join(
            f"{path} is a hard link ({count} names): the same file may also be outside "
            "the working directory"
            for path, count in self.hard_links.items()
        )


class PathJudge:
    """Resolves through the environment and judges; the root is resolved once."""

    def __init__(self, environment: ActorRef, root: str) -> None:
        self.environment = environment
        self.root = root
        self._resolved_root: str | None = None

    async def _resolve(self, path: str, same_file_in: tuple[str, ...] = ()) -> ResolvedPath:
        request = ResolvePath(path, same_file_in=same_file_in)
        resolved = await self.environment.ask(request, timeout=RESOLVE_TIMEOUT_S)
        assert isinstance(resolved, ResolvedPath)
        return resolved

    async def root_path(self) -> str:
        if self._resolved_root is None:
            self._resolved_root = (await self._resolve(self.root)).path
        return self._resolved_root

    async def refusal(self, policy: Policy, paths: list[str], writes: bool) -> str | None:
        """Why one of ``paths`` may not be touched, or None."""
        return (await self.judge(policy, paths, writes)).refusal

    async def judge(
        self, policy: Policy, paths: list[str], writes: bool, confined: bool = False
    ) -> PathVerdict:
        """Resolve each of ``paths`` once and judge it (see the module docstring)."""
        if not paths:
            return PathVerdict()
        root = await self.root_path()
        if confined:
            allowed: tuple[str, ...] = (root,)
        else:
            allowed = policy.allowed_paths if writes or policy.confine_reads else ("/",)
        resolved: dict[str, str] = {}
        hard_links: dict[str, int] = {}
        entries: dict[str, str] = {}
        denied_dirs: tuple[str, ...] | None = None
        for path in paths:
            found = await self._resolve(path)
            if found.links > 1:  # where else is it? in a denied path: refused outright
                if denied_dirs is None:
                    denied_dirs = tuple(expand(p, found.home, root) for p in policy.denied_paths)
                found = await self._resolve(path, denied_dirs)
            shown = path if found.path == path else f"{path} (resolves to {found.path})"
            if found.also_at is not None:
                return PathVerdict(
                    f"{shown}: a hard link to {found.also_at}, which is in a denied path"
                )
            entry = found.entry or found.path
            refusal = path_refusal(found.path, allowed, policy.denied_paths, found.home, root)
            if refusal is None and entry != found.path:
                refusal = path_refusal(entry, allowed, policy.denied_paths, found.home, root)
            if refusal is not None:
                if confined:
                    refusal = f"{found.path} is outside the working directory ({root})"
                return PathVerdict(f"{shown}: {refusal}")
            resolved[path] = found.path
            entries[path] = entry
            if found.links > 1:
                hard_links[path] = found.links
        return PathVerdict(None, resolved, hard_links, entries)
