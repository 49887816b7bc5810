"""Command confinement as ADR-040 describes it for ``run_command``: the working
directory is locked to the repository root, ``..`` is refused anywhere in the
command line, and absolute paths outside the root are refused unless they are
known system locations a build needs to read or run (``/usr/bin/python3``,
``/dev/null``). Like every check on a command string, this is advice a
determined command can evade (``cd $(printf ..)``); the sandbox is the boundary.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from actors.policy.paths import inside

SAFE_PREFIXES = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/etc/alternatives",
                 "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/zero", "/proc/self")  # fmt: skip
_ABSOLUTE = re.compile(r"(?:^|[=:<>])(/[^\s:;|&<>]*)")


def confinement_refusal(command: str, root: str, extra_allowed: tuple[str, ...] = ()) -> str | None:
    """Why ``command`` leaves ``root``, or None when it stays inside."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        words = command.split()
    for word in words:
        if ".." in re.split(r"[/=:<>\s]", word):
            return f"path traversal ('..') is not allowed: {word}"
        for match in _ABSOLUTE.finditer(word):
            path = posixpath.normpath(match.group(1))
            if inside(path, root) or any(inside(path, p) for p in extra_allowed):
                continue
            if any(path == p or path.startswith(p + "/") for p in SAFE_PREFIXES):
                continue
            return f"absolute path outside the working directory: {path}"
    return None
