"""Path boundaries for file tools (agent-loop-and-tool-system.md 6.4).

The environment resolves a path first (symlinks and ``..``, on the host where the
file lives); these pure functions then judge the resolved path: denied lists win
over allowed ones, and a path is inside a root only at a separator boundary
(``/repo-evil`` is not inside ``/repo``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

SECRET_PROC = re.compile(r"^/proc/[^/]+/(environ|root|cwd|mem|fd|map_files|task|fdinfo)(/|$)")
"""Files of /proc that hold another process's secrets or a way around the
sandbox's view of the filesystem. Here, not with the shell's tables
(:mod:`actors.policy.command_tables`): the file tools' checks need it, and a
session imports those tables only for its first shell line."""

SECRET_PATHS = (
    "~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
    "~/.docker", "~/.netrc", "~/.pgpass",
)  # fmt: skip
"""Where users keep credentials: denied to the file tools, hidden (empty) in the
sandbox, ``admin`` when a shell line reads them. A user extends the list with
``denied_paths`` in the policy."""

TROUPE_OWN_PATHS = ("~/.config/troupe", "~/.local/share/troupe")
"""Troupe's own config and data directories at their default places (the server
token, ``server.json``, the store): out of the model's reach like the secrets. A
data or config directory moved elsewhere is added by the host that knows it."""

DEFAULT_DENIED = (*SECRET_PATHS, *TROUPE_OWN_PATHS, "/etc/shadow", "/etc/passwd")

PROTECTED_PATHS = (".git/hooks", ".git/config", ".troupe")
"""Inside the working directory, what runs code later, outside any sandbox (git
hooks, git config's aliases and fsmonitor, Troupe's own project settings):
read-only in the sandbox, ``admin`` for a shell line that writes them, asked for a
file tool's write. The user adds paths with ``protected_paths``."""


def expand(path: str, home: str, root: str) -> str:
    """A configured path made absolute: ``~`` is the home directory, a relative
    path is relative to the session's root (the working directory)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    elif not path.startswith("/"):
        path = posixpath.join(root, path)
    return posixpath.normpath(path)


def inside(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def path_refusal(
    resolved: str, allowed: Iterable[str], denied: Iterable[str], home: str, root: str
) -> str | None:
    """Why ``resolved`` (an absolute, symlink-free path) may not be touched, or None."""
    resolved = posixpath.normpath(resolved)
    if SECRET_PROC.match(resolved):
        return f"{resolved} is another process's environment, memory or view (/proc)"
    for entry in denied:
        if inside(resolved, expand(entry, home, root)):
            return f"{resolved} is in a denied path ({entry})"
    allowed_roots = [expand(entry, home, root) for entry in allowed]
    if not any(inside(resolved, allowed_root) for allowed_root in allowed_roots):
        shown = ", ".join(allowed_roots) or "none"
        return f"{resolved} is outside the allowed paths ({shown})"
    return None


GIT_RUNS_LATER = ("hooks", "config")
"""What git runs code from inside a git directory: its hooks, and its config
(aliases, fsmonitor, filters and the like)."""


def git_control(path: str) -> str | None:
    """The part of ``path`` that makes git run code later, or None: a ``.git`` file
    itself (a worktree's or a submodule's pointer to its git directory: rewritten,
    it sends git to hooks and config of the writer's choosing), or the hooks or
    config of any ``.git`` directory on the way, a nested repository's too (the
    policy's ``protected_paths`` name only the working directory's own)."""
    parts = posixpath.normpath(path).split("/")
    for index, part in enumerate(parts):
        if part != ".git":
            continue
        if index == len(parts) - 1:
            return "/".join(parts)
        if parts[index + 1] in GIT_RUNS_LATER:
            return "/".join(parts[: index + 2])
    return None
