"""Glob patterns and the pure-Python grep used when ripgrep is not installed.

Glob semantics: ``*`` and ``?`` stay within one path segment, ``**`` spans any
number of segments, ``[...]`` is a character class and ``{a,b}`` an alternation.
Patterns match paths relative to the search root, with ``/`` separators.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from environments.errors import InvalidRequest
from environments.textfiles import looks_binary

SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob pattern; :class:`InvalidRequest` when it is malformed."""
    out: list[str] = []
    i, n, braces = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                raise InvalidRequest(f"invalid glob {pattern!r}: unclosed '['")
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body}]")
            i = end
        elif c == "{":
            braces += 1
            out.append("(?:")
        elif c == "}" and braces:
            braces -= 1
            out.append(")")
        elif c == "," and braces:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if braces:
        raise InvalidRequest(f"invalid glob {pattern!r}: unclosed '{{'")
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error as exc:
        raise InvalidRequest(f"invalid glob {pattern!r}: {exc}") from None


def walk_files(root: Path) -> Iterator[tuple[Path, str]]:
    """Every regular file under ``root`` as (path, path relative to root with '/')."""
    if root.is_file():
        yield root, root.name
        return
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRECTORIES)
        base = Path(directory)
        for name in sorted(files):
            path = base / name
            yield path, path.relative_to(root).as_posix()


def glob_local(root: Path, pattern: str) -> list[str]:
    """Matching files under ``root``, newest first."""
    matcher = glob_to_regex(pattern)
    found: list[tuple[float, str]] = []
    for path, relative in walk_files(root):
        if matcher.match(relative):
            try:
                found.append((path.stat().st_mtime, str(path)))
            except OSError:
                continue
    found.sort(key=lambda item: (-item[0], item[1]))
    return [path for _, path in found]


def compile_grep_pattern(pattern: str, case_insensitive: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE if case_insensitive else 0)
    except re.error as exc:
        raise InvalidRequest(f"invalid regex {pattern!r}: {exc}") from None


def file_filter(glob_filter: str | None) -> re.Pattern[str] | None:
    """``*.py`` filters on the file name; a filter with '/' on the relative path."""
    return glob_to_regex(glob_filter) if glob_filter else None


def grep_python(
    root: Path, pattern: str, glob_filter: str | None, case_insensitive: bool, max_results: int
) -> tuple[list[str], bool]:
    """``path:line:text`` matches and whether ``max_results`` cut the list short."""
    regex = compile_grep_pattern(pattern, case_insensitive)
    name_filter = file_filter(glob_filter)
    matches: list[str] = []
    for path, relative in walk_files(root):
        if name_filter is not None:
            subject = relative if "/" in (glob_filter or "") else path.name
            if not name_filter.match(subject):
                continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if looks_binary(data):
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                if len(matches) == max_results:
                    return matches, True
                matches.append(f"{path}:{number}:{line}")
    return matches, False
