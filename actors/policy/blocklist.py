"""Blocklist patterns: commands denied whatever their category.

A pattern is a command name (a shell glob: ``mkfs*``) followed by words that must
all appear among its arguments, short flags counted one by one, so ``rm -r /``
matches ``rm -fr /`` and ``chmod 777`` matches ``chmod -R 777 dir``. A word with
``=`` may hold a glob after it (``of=/dev/sd*``); a word that is a path matches the
same path however it is spelled (``/``, ``//``, ``/.``; ``~``, ``~/``, ``$HOME``).
A pattern that is itself a fork bomb (``:(){ :|:& };:``) matches every fork bomb,
whatever its function is called. Patterns are matched against every command a line
runs, after unwrapping (``bash -c``, ``env``, ``xargs``, ``sudo`` ...), so quoting
and wrappers do not slip past.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
import shlex
from collections.abc import Iterable

from actors.policy.shell import FORK_BOMB, Invocation, split_flags

_FORK_BOMB_TEXT = re.compile(r"^\s*([^\s(){};|&]+)\s*\(\)\s*\{.*\1.*\1.*\}\s*;?\s*\1\s*$", re.S)


@functools.lru_cache(maxsize=512)
def pattern_words(pattern: str) -> tuple[str, ...]:
    """A pattern's words, split once: shlex is slow, and every call of every
    round matches the same few patterns. A fork bomb pattern is the one word
    the classifier gives every fork bomb."""
    if _FORK_BOMB_TEXT.match(pattern):
        return (FORK_BOMB,)
    try:
        return tuple(shlex.split(pattern))
    except ValueError:
        return tuple(pattern.split())


_RECURSIVE = frozenset({"-r", "-R", "--recursive"})
_SAME_FLAGS: dict[str, dict[str, frozenset[str]]] = {
    "rm": {"-r": _RECURSIVE, "-R": _RECURSIVE, "-f": frozenset({"--force"})},
    "chmod": {"-R": frozenset({"--recursive"})},
    "chown": {"-R": frozenset({"--recursive"})},
}
"""Spellings a program reads as the same flag (``rm -R`` is ``rm -r``)."""


def _path_form(word: str) -> str | None:
    """``word`` as a path in one spelling (``~`` for the home), None if not a path."""
    for home in ("${HOME}", "$HOME", "~"):
        if word == home or word.startswith(home + "/"):
            return "~" + posixpath.normpath("/" + word[len(home) :]).rstrip("/")
    if word.startswith("/"):
        return posixpath.normpath("/" + word.lstrip("/"))
    return None


def _word_matches(word: str, args: tuple[str, ...]) -> bool:
    if word in args:
        return True
    if "=" in word and any(c in word for c in "*?["):
        return any(fnmatch.fnmatchcase(arg, word) for arg in args)
    form = _path_form(word)
    return form is not None and any(_path_form(arg) == form for arg in args)


def matches(pattern: str, invocation: Invocation) -> bool:
    """Whether ``invocation`` is what ``pattern`` describes."""
    words = pattern_words(pattern)
    if not words or not invocation.argv:
        return False
    if not fnmatch.fnmatchcase(invocation.argv[0], words[0]):
        return False
    args = invocation.argv[1:]
    flags = split_flags(args)
    for alias, same in _SAME_FLAGS.get(invocation.argv[0], {}).items():
        if flags & same:
            flags.add(alias)
    for word in words[1:]:
        if word.startswith("-") and not word.startswith("--") and len(word) > 2:
            if not all(f"-{letter}" in flags for letter in word[1:]):
                return False
        elif word.startswith("-"):
            if word not in flags and word not in args:
                return False
        elif not _word_matches(word, args):
            return False
    return True


class PatternIndex:
    """A list of patterns indexed by command name: a call looks only at the
    patterns for the names it runs (and at the few whose name is a glob), instead
    of matching every pattern against every invocation."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.by_name: dict[str, list[tuple[int, str]]] = {}
        self.globbed: list[tuple[int, re.Pattern[str], str]] = []
        for order, pattern in enumerate(patterns):
            words = pattern_words(pattern)
            if not words:
                continue
            if any(char in words[0] for char in "*?["):
                compiled = re.compile(fnmatch.translate(words[0]))
                self.globbed.append((order, compiled, pattern))
            else:
                self.by_name.setdefault(words[0], []).append((order, pattern))

    def first_match(self, invocations: Iterable[Invocation]) -> str | None:
        """The first pattern (in list order) any invocation matches, or None."""
        found: tuple[int, str] | None = None
        for invocation in invocations:
            if not invocation.argv:
                continue
            name = invocation.argv[0]
            candidates = list(self.by_name.get(name, ()))
            candidates += [(o, p) for o, rx, p in self.globbed if rx.match(name)]
            for order, pattern in candidates:
                if (found is None or order < found[0]) and matches(pattern, invocation):
                    found = (order, pattern)
        return None if found is None else found[1]


@functools.lru_cache(maxsize=64)
def pattern_index(patterns: tuple[str, ...]) -> PatternIndex:
    """The index of a policy's pattern list, built once per list."""
    return PatternIndex(patterns)


def first_match(patterns: Iterable[str], invocations: Iterable[Invocation]) -> str | None:
    """The first pattern any invocation matches, or None."""
    return pattern_index(tuple(patterns)).first_match(invocations)


def command_prefix_matches(prefix: str, invocation: Invocation) -> bool:
    """Whether ``invocation`` starts with the words of ``prefix`` (a session grant
    such as ``rm -rf`` or ``git push``)."""
    words = pattern_words(prefix)
    return bool(words) and invocation.argv[: len(words)] == words
