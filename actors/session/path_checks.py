"""The paths a file tool's call touches, resolved by the environment and judged
by the policy's path lists (agent-loop-and-tool-system.md 6.4).

The model's path is never judged as written: the environment resolves it on its
own host (symlinks, ``..``), so a symlink to ``/etc`` inside the working directory
is ``/etc`` here. Writes must land inside the allowed paths; reads only stay out
of the denied ones (credentials), so looking at a system header still works.
"""

from __future__ import annotations

from typing import Any

from actors.kernel import ActorRef
from actors.policy.engine import Policy
from actors.policy.paths import path_refusal
from protocol.environment import ResolvedPath, ResolvePath

PATCH_TARGETS = ("*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: ")
RESOLVE_TIMEOUT_S = 30.0


def call_paths(arguments: dict[str, Any]) -> list[str]:
    """The paths named by a call's arguments, patch targets included."""
    found: list[str] = []
    for name in ("file_path", "path"):
        value = arguments.get(name)
        if isinstance(value, str) and value:
            found.append(value)
    paths = arguments.get("paths")
    if isinstance(paths, list):
        found.extend(p for p in paths if isinstance(p, str) and p)
    patch = arguments.get("patch")
    if isinstance(patch, str):
        for line in patch.splitlines():
            for marker in PATCH_TARGETS:
                if line.startswith(marker) and line[len(marker) :].strip():
                    found.append(line[len(marker) :].strip())
    return found


class PathJudge:
    """Resolves through the environment and judges; the root is resolved once."""

    def __init__(self, environment: ActorRef, root: str) -> None:
        self.environment = environment
        self.root = root
        self._resolved_root: str | None = None

    async def _resolve(self, path: str) -> ResolvedPath:
        resolved = await self.environment.ask(ResolvePath(path), timeout=RESOLVE_TIMEOUT_S)
        assert isinstance(resolved, ResolvedPath)
        return resolved

    async def refusal(self, policy: Policy, paths: list[str], writes: bool) -> str | None:
        """Why one of ``paths`` may not be touched, or None."""
        if not paths:
            return None
        if self._resolved_root is None:
            self._resolved_root = (await self._resolve(self.root)).path
        allowed = policy.allowed_paths if writes or policy.confine_reads else ("/",)
        for path in paths:
            resolved = await self._resolve(path)
            refusal = path_refusal(
                resolved.path, allowed, policy.denied_paths, resolved.home, self._resolved_root
            )
            if refusal is not None:
                shown = path if resolved.path == path else f"{path} (resolves to {resolved.path})"
                return f"{shown}: {refusal}"
        return None
