"""A shell line's simple commands, as a shell would run them: each one's words,
whether its name is computed at run time, and the files it redirects output into.

``bashlex`` is the parser; a line with nothing for a shell to expand skips it (the
same words in microseconds instead of milliseconds), and a line bashlex cannot
parse (``case``, arithmetic expansion) is split word by word, which the caller
must treat as a guess.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

import bashlex
import msgspec


class SimpleCommand(msgspec.Struct, frozen=True):
    """One simple command of a line, before any wrapper is unwrapped."""

    argv: tuple[str, ...]
    dynamic_name: bool
    redirects: tuple[str, ...]


def parse_line(command: str) -> Iterator[SimpleCommand]:
    """The simple commands of ``command``; raises whatever bashlex raises when it
    cannot parse the line (callers fall back to :func:`split_words`)."""
    plain = _plain(command)
    if plain is not None:
        yield from plain
        return
    for tree in bashlex.parse(command):
        yield from _walk(tree)


_PLAIN_LINE = re.compile(
    r"[A-Za-z0-9_./=:,@%+ \t-]+(?:(?:\|\||&&|[|;])[A-Za-z0-9_./=:,@%+ \t-]+)*;?"
)
_PLAIN_OPERATORS = re.compile(r"\|\||&&|[|;]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RESERVED = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "select",
        "function",
        "time",
        "in",
        "coproc",
    ]
)


def _plain(command: str) -> list[SimpleCommand] | None:
    """The simple commands of a line with nothing for a shell to expand (no
    quotes, ``$``, globs, redirections, groups or reserved words): the words
    bashlex would give, found in microseconds instead of milliseconds. None
    when the line needs the real parser."""
    line = command.strip()
    if not _PLAIN_LINE.fullmatch(line):
        return None
    simples: list[SimpleCommand] = []
    for segment in _PLAIN_OPERATORS.split(line.removesuffix(";")):
        words = segment.split()
        if not words or words[0] in _RESERVED:
            return None
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        if words:
            simples.append(SimpleCommand(tuple(words), False, ()))
    return simples


def _walk(node: object) -> Iterator[SimpleCommand]:
    kind = getattr(node, "kind", "")
    if kind == "command":
        yield from _command(node)
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        yield from _walk(node.command)  # type: ignore[attr-defined]
        return
    for child in _children(node):
        yield from _walk(child)


def _children(node: object) -> Iterator[object]:
    for attribute in ("parts", "list"):
        yield from getattr(node, attribute, None) or ()
    for attribute in ("command", "output", "body"):
        child = getattr(node, attribute, None)
        if child is not None and hasattr(child, "kind"):
            yield child


def _command(node: object) -> Iterator[SimpleCommand]:
    argv: list[str] = []
    redirects: list[str] = []
    dynamic_name = False
    for part in node.parts:  # type: ignore[attr-defined]
        kind = part.kind
        if kind == "word":
            if not argv and _is_dynamic(part):
                dynamic_name = True
            argv.append(part.word)
            yield from _substitutions(part)
        elif kind == "assignment":
            yield from _substitutions(part)
        elif kind == "redirect":
            output = part.output
            if part.type in (">", ">>", ">|", "&>", ">&", "&>>") and hasattr(output, "word"):
                redirects.append(output.word)
                yield from _substitutions(output)
            elif hasattr(output, "kind"):
                yield from _substitutions(output)
    if argv or redirects:
        yield SimpleCommand(tuple(argv), dynamic_name, tuple(redirects))


def _is_dynamic(word: object) -> bool:
    return any(
        p.kind in ("parameter", "commandsubstitution", "processsubstitution")
        for p in getattr(word, "parts", ())
    )


def _substitutions(node: object) -> Iterator[SimpleCommand]:
    for part in getattr(node, "parts", None) or ():
        if part.kind in ("commandsubstitution", "processsubstitution"):
            yield from _walk(part.command)
        else:
            yield from _substitutions(part)


_SEPARATORS = re.compile(r"\|\||&&|[;|&()\n`{}]|\$\(")


def split_words(command: str) -> Iterator[SimpleCommand]:
    """Word splitting for the lines bashlex cannot parse: each segment between
    separators is one command; quotes are honoured where shlex can."""
    for segment in _SEPARATORS.split(command):
        segment = segment.strip()
        if not segment:
            continue
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            words = segment.split()
        words = [w for w in words if w not in ("then", "do", "else", "fi", "done", "esac")]
        if not words:
            continue
        redirects = [words[i + 1] for i, w in enumerate(words[:-1]) if w in (">", ">>")]
        argv = [w for i, w in enumerate(words) if w not in (">", ">>")
                and (i == 0 or words[i - 1] not in (">", ">>"))]  # fmt: skip
        yield SimpleCommand(tuple(argv), bool(argv) and argv[0].startswith("$"), tuple(redirects))
