"""Where a word of a shell line points, as the shell would expand it for this
session: ``~`` and ``$HOME`` are the session's home, relative paths start at the
line's current directory (``cd`` moves it), ``..`` is followed. A word whose value
is known only at run time (``$X``, ``$(...)``, a glob that may match ``..``)
resolves to None, and a caller judging a write treats None as outside.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath
import re

import msgspec

from actors.policy.command_tables import HARMLESS_DEVICES
from actors.policy.paths import DEFAULT_DENIED, PROTECTED_PATHS, SECRET_PROC, expand, inside
from actors.policy.shell_parse import Word, expand_braces


class ShellContext(msgspec.Struct, frozen=True):
    """What a line's paths are judged against: the session's working directory
    (the workspace), its home, and the hidden paths (the policy's denied paths)."""

    cwd: str
    home: str
    hidden: tuple[str, ...] = DEFAULT_DENIED
    protected: tuple[str, ...] = PROTECTED_PATHS
    persistent: bool = False
    """The line runs in a persistent shell that keeps its directory for the next
    call: ending the line outside the working directory is ``admin``."""
    start: str | None = ""
    """The directory the line starts in: ``""`` for ``cwd``, None when unknown (a
    persistent shell after a ``cd`` the classifier could not follow)."""

    @staticmethod
    def local(cwd: str | None = None) -> ShellContext:
        """This process's working directory and home (for callers without a session)."""
        return ShellContext(cwd or os.getcwd(), os.path.expanduser("~"))


_GLOB = re.compile(r"[*?\[]")
_HOME_PARAMETER = re.compile(r"^\$(HOME\b|\{HOME\})")
_PWD_PARAMETER = re.compile(r"^\$(PWD\b|\{PWD\})")


def resolve(
    word: Word, cwd: str | None, context: ShellContext, reach: bool = False
) -> list[str] | None:
    """The absolute paths ``word`` can name (more than one after brace expansion;
    glob characters stay in them), or None when that is known only at run time.
    ``reach``: keep a glob that may match ``..`` as it is (a reader asks what the
    pattern can reach, not one place it names)."""
    text = word.text
    if word.substituted:
        text = _HOME_PARAMETER.sub(lambda _: context.home, text)
        if cwd is not None:
            text = _PWD_PARAMETER.sub(lambda _: cwd, text)
        if "$" in text or "`" in text or "<(" in text or ">(" in text:
            return None
    texts = expand_braces(text) if word.pattern and "{" in text else [text]
    if texts is None:
        return None
    paths: list[str] = []
    for one in texts:
        if one == "~" or one.startswith("~/"):
            one = context.home + one[1:]
        elif one.startswith("~"):
            return None  # ~user, ~+, ~-: another directory
        if not one.startswith("/"):
            if cwd is None:
                return None
            one = posixpath.join(cwd, one)
        if (
            word.pattern
            and not reach
            and any(
                _GLOB.search(part) and fnmatch.fnmatchcase("..", part) for part in one.split("/")
            )
        ):
            return None  # a glob that can match ".." (".*" in older shells)
        paths.append(posixpath.normpath(one))
    return paths


def _could_be_within(path: str, root: str, recursive: bool, shell_dots: bool = False) -> bool:
    """``path`` (maybe holding globs) is in ``root``, or, when ``recursive``, holds it.
    ``shell_dots``: a glob matches a leading dot only literally, as the shell's does."""
    if not _GLOB.search(path):
        return inside(path, root) or (recursive and inside(root, path))
    parts = path.strip("/").split("/")
    root_parts = root.strip("/").split("/")
    for index in range(min(len(parts), len(root_parts))):
        if not fnmatch.fnmatchcase(root_parts[index], parts[index]):
            return False
        if shell_dots and root_parts[index][:1] == "." and parts[index][:1] != ".":
            return False
    return len(parts) >= len(root_parts) or recursive


@functools.lru_cache(maxsize=16)
def _hidden_roots(hidden: tuple[str, ...], home: str, cwd: str) -> tuple[tuple[str, str], ...]:
    """Each hidden entry with its absolute path, worked out once per session."""
    return tuple((entry, expand(entry, home, cwd)) for entry in hidden)


def hidden_entry(
    path: str, context: ShellContext, recursive: bool = False, shell_dots: bool = False
) -> str | None:
    """The hidden path (a credential, Troupe's own files) ``path`` reads, or None.
    ``recursive``: the command reads the whole tree under ``path``; ``shell_dots``:
    see :func:`_could_be_within`."""
    for entry, root in _hidden_roots(context.hidden, context.home, context.cwd):
        if _could_be_within(path, root, recursive, shell_dots):
            return entry
    if SECRET_PROC.match(path) or (
        path.startswith("/proc/") and _proc_glob_reaches(path, recursive)
    ):
        return "/proc/<pid>/environ, root, fd ..."
    return None


_PROC_SECRETS = ("environ", "root", "cwd", "mem", "fd", "map_files", "task", "fdinfo")


def _proc_glob_reaches(path: str, recursive: bool) -> bool:
    """A /proc pattern that can name another process's secrets: ``/proc/*/environ``,
    ``/proc/*/e*``, or any pattern read recursively; ``ls -d /proc/[0-9]*`` (the
    process directories themselves) and ``/proc/*/status`` cannot."""
    if not _GLOB.search(path):
        return False
    parts = path.split("/")[2:]
    if recursive or (len(parts) > 2 and _GLOB.search(parts[1])):
        return True
    if len(parts) < 2:
        return False
    return any(fnmatch.fnmatchcase(name, parts[1]) for name in _PROC_SECRETS)


@functools.lru_cache(maxsize=16)
def _needles(hidden: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern finding any hidden path named inside a text (``~/.ssh`` as
    ``.ssh`` at a path boundary), and the /proc files of other processes."""
    names = [entry[2:] if entry.startswith("~/") else entry for entry in hidden]
    alternatives = [re.escape(name) for name in names if name and name != "~"]
    alternatives.append(r"/proc/[^/\s'\"]*/(?:environ|root|mem|fd|map_files|cwd)")
    return re.compile(r"(?:^|(?<=[/\s'\"(+=:@]))(" + "|".join(alternatives) + r")(?=/|$|[\s'\")])")


def names_hidden(text: str, context: ShellContext) -> str | None:
    """A hidden path named in the literal text of a word: one whose value is known
    only at run time (``$(printf ~)/.ssh/id_rsa``, ``/proc/$PPID/environ``), or
    code given inline (``python -c "open('/home/u/.ssh/id_rsa')"``)."""
    match = _needles(context.hidden).search(text)
    return match.group(1) if match else None


def write_refusal(
    paths: list[str] | None, shown: str, context: ShellContext, recursive: bool = False
) -> str | None:
    """Why writing ``paths`` is ``admin`` (outside the working directory, unknown,
    a protected path inside it), or None when it stays inside. ``recursive``: the
    whole tree under each path is written (``chmod -R``)."""
    if paths is None:
        return f"writes to a path known only at run time ({shown})"
    for path in paths:
        if path in HARMLESS_DEVICES or path.startswith("/dev/fd/"):
            continue
        if not inside(path, context.cwd):
            return f"writes outside the working directory ({shown})"
        for protected in context.protected:
            if _could_be_within(path, posixpath.join(context.cwd, protected), recursive):
                return f"writes {protected}, which runs code later ({shown})"
    return None
