"""Judged paths on an SSH host: resolved there, and used there with no link followed.

Resolution runs on the host (``realpath -m``, the hard-link count from ``stat``,
other names of a hard-linked file searched with ``find -samefile``). A guarded
file operation runs on the host too, as a short Python program made of
:mod:`environments.nofollow` itself (``openat2`` or the component walk, as
locally), so nothing changes between the check and the use there either. A host
without ``python3`` falls back to checking the path (no link on the way, one hard
link) just before the SFTP operation: that narrows the window but cannot close it,
which is why the sandbox, not this check, is the boundary on such hosts.
"""

from __future__ import annotations

import base64
import errno
import json
import posixpath
import shlex
from pathlib import Path
from typing import Any

from environments import nofollow
from environments.errors import (
    EnvironmentError_,
    FileNotFound,
    FileSystemError,
    HardLinkRefused,
    InvalidPath,
    LinkInPath,
    NotAFile,
    PermissionDenied,
)

_SOURCE = Path(nofollow.__file__).read_text()
_EOF = "TROUPE_NOFOLLOW_EOF"
NO_PYTHON = 127
"""The remote shell's status when ``python3`` is not there."""

_DRIVER = """
import base64 as _b64, json as _json, sys as _sys
_op = _json.loads(_b64.b64decode({request!r}))
def _run(op):
    kind, path, links = op["op"], op["path"], op["hard_links"]
    if kind == "read":
        return _b64.b64encode(read_file(path, links)).decode()
    if kind == "write":
        write_file(path, _b64.b64decode(op["data"]), links)
        return None
    if kind == "delete":
        delete_file(path, links)
        return None
    if kind == "kind":
        return globals()["kind"](path)
    return [list(entry) for entry in list_tree(path, op["depth"])]
try:
    _answer = {{"ok": _run(_op)}}
except HardLinked as _error:
    _answer = {{"error": "hard_link", "errno": _error.errno, "message": _error.strerror}}
except OSError as _error:
    _answer = {{"error": "os", "errno": _error.errno, "message": _error.strerror}}
_sys.stdout.write(_json.dumps(_answer))
"""


def program(op: str, path: str, hard_links: bool, **extra: Any) -> str:
    """The shell script that runs one guarded operation with the host's python3."""
    request = base64.b64encode(
        json.dumps({"op": op, "path": path, "hard_links": hard_links, **extra}).encode()
    ).decode()
    body = _SOURCE + _DRIVER.format(request=request)
    check = f"command -v python3 >/dev/null || exit {NO_PYTHON}\n"
    return f"{check}exec python3 - <<'{_EOF}'\n{body}\n{_EOF}\n"


def answer(path: str, status: int, out: str, err: str) -> Any:
    """The operation's value, or its typed refusal."""
    try:
        reply = json.loads(out)
    except ValueError:
        raise FileSystemError(
            f"{path}: {err.strip() or f'remote helper failed ({status})'}"
        ) from None
    if "ok" in reply:
        return reply["ok"]
    raise refusal(path, reply.get("error"), reply.get("errno"), reply.get("message") or "")


def refusal(path: str, kind: str | None, code: int | None, message: str) -> EnvironmentError_:
    if kind == "hard_link":
        return HardLinkRefused(
            f"{path} {message}: its other names may be outside the working directory "
            "(the user must approve using it)"
        )
    if code in (errno.ELOOP, errno.ENOTDIR):
        return LinkInPath(
            f"{path}: a symbolic link (or a non-directory) is now in the path that was "
            "checked; refused rather than followed"
        )
    if code == errno.ENOENT:
        return FileNotFound(f"{path} does not exist")
    if code == errno.EISDIR:
        return NotAFile(f"{path} is a directory")
    if code in (errno.EACCES, errno.EPERM):
        return PermissionDenied(f"permission denied: {path}")
    if code == errno.EINVAL:
        return InvalidPath(f"{path}: {message}")
    return FileSystemError(f"{path}: {message}")


def check_script(path: str, hard_links: bool) -> str:
    """Without python3: refuse a path with a link on the way (or at the end), or a
    hard-linked file, just before the SFTP operation uses it."""
    lines = [f"p={shlex.quote(path)}", 'q=""', "IFS=/", "set -f", "for c in $p; do",
             '  [ -z "$c" ] && continue', '  q="$q/$c"',
             '  if [ -L "$q" ]; then echo link >&2; exit 40; fi', "done"]  # fmt: skip
    if not hard_links:
        lines.append('if [ -f "$p" ] && [ "$(stat -c %h -- "$p")" -gt 1 ]; then exit 41; fi')
    return "\n".join(lines) + "\n"


def check_refusal(path: str, status: int) -> EnvironmentError_ | None:
    if status == 40:
        return refusal(path, "os", errno.ELOOP, "")
    if status == 41:
        return refusal(path, "hard_link", errno.EPERM, "has more than one hard link")
    return None


def resolve_script(path: str, same_file_in: tuple[str, ...]) -> str:
    """``realpath -m``, ``$HOME``, the entry (parent resolved, name kept), the
    hard-link count of a regular file (0 otherwise) and other names under
    ``same_file_in``, NUL-separated."""
    dirs = " ".join(shlex.quote(d) for d in same_file_in)
    search = (
        f'  for d in {dirs}; do [ -e "$d" ] && find "$d" -xdev -samefile "$r" -print0 '
        "2>/dev/null; done | head -c 65536\n"
        if same_file_in
        else ""
    )
    parent, name = posixpath.split(path.rstrip("/"))
    if name in ("", ".", ".."):
        entry = 'e="$r"\n'
    else:
        entry = f'e="$(realpath -m -- {shlex.quote(parent or ".")})"/{shlex.quote(name)}\n'
    return (
        f"r=$(realpath -m -- {shlex.quote(path)}) || exit 1\n"
        f"{entry}"
        'printf \'%s\\0%s\\0%s\\0\' "$r" "$HOME" "$e"\n'
        'if [ -f "$r" ] && [ ! -L "$r" ]; then\n'
        '  printf \'%s\\0\' "$(stat -c %h -- "$r")"\n'
        f"{search}"
        "else printf '0\\0'; fi\n"
    )
