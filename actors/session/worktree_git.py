"""The git scripts of worktree isolation (``actors/session/isolation.py``): one
bash script to add a subagent's worktree, one to close it. Each runs through the
parent's environment (this machine or an SSH host) with Troupe's safe git.

Git never follows a worktree's ``.git`` file here: the subagent's file tools can
rewrite it to point at a git directory of its making, whose configuration (a
filter, an fsmonitor) would then run outside the sandbox. The worktree's git
directory is recorded when git makes it and used from then on; for a parent that
is itself such a worktree, ``GIT_DIR`` and ``GIT_WORK_TREE`` say where it is.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Protocol

from environments.safe_git import SAFE_GIT_ENV, safe_git_argv

WORKTREES = ".troupe/worktrees"
"""Where worktrees go, under the repository's top level (excluded from its status)."""


class CopyRefused(ValueError):
    """A ``worktree_copy`` entry that is not a path inside the repository."""


class Worktree(Protocol):
    """What the close needs to know of a worktree."""

    @property
    def path(self) -> str: ...
    @property
    def branch(self) -> str: ...
    @property
    def base(self) -> str: ...
    @property
    def gitdir(self) -> str: ...
    @property
    def top(self) -> str: ...
    @property
    def top_gitdir(self) -> str: ...
    @property
    def merge(self) -> bool: ...


def _git() -> str:
    """A shell function ``g`` running Troupe's safe git with its arguments."""
    env = " ".join(f"{name}={shlex.quote(value)}" for name, value in SAFE_GIT_ENV.items())
    argv = shlex.join([*safe_git_argv(), "-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false"])
    return f'g() {{ {env} {argv} "$@"; }}\n'


def check_copy(path: str) -> str:
    """A ``worktree_copy`` entry: relative, inside the repository, no ``..``."""
    clean = posixpath.normpath(path)
    if not path or posixpath.isabs(path) or clean == "." or clean.split("/")[0] == "..":
        raise CopyRefused(f"worktree_copy: {path!r} is not a path inside the repository")
    return clean


def discovery_off(top_gitdir: str, top: str) -> str:
    """For a parent that is itself in a worktree of ours: git told where that
    worktree's git directory is, so it never reads the ``.git`` file the parent
    could have rewritten."""
    if not top_gitdir:
        return ""
    return f"export GIT_DIR={shlex.quote(top_gitdir)} GIT_WORK_TREE={shlex.quote(top)}\n"


def create_script(
    name: str, branch: str, copies: list[str], top_gitdir: str = "", top: str = ""
) -> str:
    """Add the worktree; print its path, the parent's prefix, the base commit and
    the worktree's own git directory (recorded now, before the child can touch
    the worktree's ``.git`` file). ``top_gitdir`` and ``top``: the parent's own
    worktree, when it has one (see :func:`_discovery_off`)."""
    copy_lines = "".join(
        # A listed file lands only inside the worktree: a committed symbolic link on
        # its way (``config -> /somewhere``) must not carry the copy out of it.
        f"c={shlex.quote(c)}\n"
        'if [ -e "$top/$c" ]; then case "$(realpath -m -- "$dir/$c")" in "$dir"/*) '
        'mkdir -p -- "$(dirname -- "$dir/$c")" && cp -a -- "$top/$c" "$dir/$c";; '
        '*) echo "worktree_copy: $c leads out of the worktree; not copied" >&2;; esac; fi\n'
        for c in copies
    )
    return (
        "set -e\n"
        + _git()
        + discovery_off(top_gitdir, top)
        + "top=$(g rev-parse --show-toplevel)\n"
        "prefix=$(g rev-parse --show-prefix)\n"
        "common=$(g rev-parse --path-format=absolute --git-common-dir)\n"
        "base=$(g rev-parse --verify -q HEAD^{commit}) || "
        "{ echo 'the repository has no commit yet' >&2; exit 3; }\n"
        f'dir="$top"/{WORKTREES}/{name}\n'
        f'mkdir -p "$top"/{WORKTREES} "$common/info"\n'
        f'grep -qxF /{WORKTREES}/ "$common/info/exclude" 2>/dev/null || '
        f'echo /{WORKTREES}/ >> "$common/info/exclude"\n'
        f'g worktree add -q -b {shlex.quote(branch)} "$dir" "$base" >&2\n'
        'gitdir=$(unset GIT_DIR GIT_WORK_TREE; g -C "$dir" rev-parse --path-format=absolute '
        "--git-dir)\n"
        + copy_lines
        + 'printf \'%s\\0%s\\0%s\\0%s\\0\' "$dir" "$prefix" "$base" "$gitdir"\n'
    )


_IDENTITY = (
    "ident=(); t config user.email >/dev/null || "
    "ident=(-c user.name=Troupe -c user.email=troupe@localhost)\n"
)


def close_script(worktree: Worktree, message: str) -> str:
    """Commit what is left, merge on request, remove the worktree, and delete the
    branch only when it has no commit of its own or was merged. Prints ``state``
    and a detail. Git works on the worktree through the git directory recorded at
    creation, never through the worktree's own ``.git`` file, which the child
    could have rewritten to point at a configuration of its making. A commit that
    fails keeps the worktree (its work is not on the branch)."""
    q = shlex.quote
    return (
        _git() + f"dir={q(worktree.path)}; branch={q(worktree.branch)}; base={q(worktree.base)}\n"
        f"top={q(worktree.top)}; gitdir={q(worktree.gitdir)}; "
        f"merge={'1' if worktree.merge else '0'}\n"
        + (
            f't() {{ g --git-dir={q(worktree.top_gitdir)} --work-tree="$top" "$@"; }}\n'
            if worktree.top_gitdir
            else 't() { g -C "$top" "$@"; }\n'
        )
        + _IDENTITY
        # The worktree's .git file as git wrote it, whatever the child made of it: a
        # worktree kept for review must not point the user's git elsewhere.
        + 'if [ -d "$dir" ]; then rm -rf -- "$dir/.git"; '
        'printf \'gitdir: %s\\n\' "$gitdir" > "$dir/.git"; fi\n'
        + 'w() { g --git-dir="$gitdir" --work-tree="$dir" "$@"; }\n'
        "state=kept; detail=; saved=1\n"
        'if [ -d "$dir" ]; then\n'
        "  if w add -A >&2 && { w diff --cached --quiet || "
        f'w "${{ident[@]}}" commit -q --no-verify -m {q(message)} >&2; }}; then :\n'
        '  else saved=0; detail="its work could not be committed; the worktree is kept"; fi\n'
        "fi\n"
        'own=$(t rev-list --count "$base..$branch") || own=unknown\n'
        'if [ "$saved" = 1 ] && [ "$own" = 0 ]; then state=removed\n'
        'elif [ "$saved" = 1 ] && [ "$merge" = 1 ] && [ "$own" != unknown ]; then\n'
        '  if t "${ident[@]}" merge -q --no-ff --no-edit "$branch" >&2; then\n'
        "    state=merged\n"
        "  else t merge --abort >&2 2>/dev/null; "
        'detail="the merge into $(t rev-parse --abbrev-ref HEAD) failed (a conflict, or '
        'local changes in the way); the branch is kept"; fi\n'
        "fi\n"
        'if [ "$saved" = 1 ]; then t worktree remove --force "$dir" >&2 2>/dev/null || '
        '{ rm -rf -- "$dir"; t worktree prune >&2; }; fi\n'
        'if [ "$state" = removed ]; then t branch -D "$branch" >&2 || state=kept; fi\n'
        'if [ "$state" = merged ]; then t branch -d "$branch" >&2 || '
        'detail="merged; the branch could not be deleted"; fi\n'
        'printf "%s\\n%s\\n" "$state" "$detail"\n'
    )
