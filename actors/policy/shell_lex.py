"""A fast reader for the shell lines models run most: words with quotes, simple
parameters (``$HOME``, ``"$f"``), globs, ``~``, pipes, ``&&``/``||``/``;`` and
plain redirections (``> f``, ``2>&1``, ``<<< s``). It gives exactly what the
bashlex walk gives for such a line (tests/policy/test_plain_fast_path.py checks),
in microseconds instead of the milliseconds bashlex takes; for anything else
(substitutions, groups, braces, reserved words, here-documents, backgrounding,
escapes) it returns None and bashlex reads the line.
"""

from __future__ import annotations

import re

from actors.policy.shell_words import Redirect, SimpleCommand, Word

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SPECIAL_PARAMETERS = frozenset("$?!#@*-0123456789")
_STOP = frozenset(" \t|&;<>")
_REJECT = frozenset("{}()`\\\n\r!")
_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
     "esac", "select", "function", "time", "in", "coproc", "!", "[[", "]]", "{", "}"}
)  # fmt: skip
_REDIRECTS = (">>", ">|", ">&", "<<<", "<>", "&>>", "&>", ">", "<")


class _Reject(Exception):
    """The line needs the real parser."""


def quick_parse(line: str) -> list[SimpleCommand] | None:
    """The simple commands of ``line``, or None when it needs bashlex."""
    try:
        return _Reader(line).commands()
    except _Reject:
        return None


class _Reader:
    def __init__(self, line: str) -> None:
        self.s = line
        self.i = 0

    def commands(self) -> list[SimpleCommand]:
        s = self.s
        n = len(s)
        segments: list[tuple[list[Word], list[Word], list[Redirect]]] = []
        operators: list[str] = []
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            while self.i < n and s[self.i] in " \t":
                self.i += 1
            if self.i >= n:
                break
            char = s[self.i]
            two = s[self.i : self.i + 2]
            if two in ("||", "&&") or char in "|;":
                if two in ("|&", ";;", ";&"):
                    raise _Reject
                operator = two if two in ("||", "&&") else char
                self.i += len(operator)
                if not words and not assignments and not redirects:
                    raise _Reject
                segments.append((words, assignments, redirects))
                operators.append(operator)
                words, assignments, redirects = [], [], []
                continue
            if char == "&" and two != "&>":
                raise _Reject  # backgrounding
            redirect = self.redirect()
            if redirect is not None:
                redirects.append(redirect)
                continue
            start = self.i
            word = self.word()
            raw = s[start : self.i]
            if not words and raw in _RESERVED:
                raise _Reject
            if not words and not redirects and _ASSIGNMENT.match(raw):
                assignments.append(word)
            else:
                words.append(word)
        if words or assignments or redirects:
            segments.append((words, assignments, redirects))
        elif operators and operators[-1] != ";":
            raise _Reject
        if not segments:
            return []
        found: list[SimpleCommand] = []
        for index, (seg_words, seg_assignments, seg_redirects) in enumerate(segments):
            before = operators[index - 1] if index > 0 else ""
            after = operators[index] if index < len(operators) else ""
            piped = "|" in (before, after)
            found.append(
                SimpleCommand(tuple(seg_words), tuple(seg_assignments), tuple(seg_redirects), piped)
            )
        return found

    def redirect(self) -> Redirect | None:
        s = self.s
        start = self.i
        index = start
        while index < len(s) and s[index].isdigit():
            index += 1
        rest = s[index : index + 3]
        operator = next((op for op in _REDIRECTS if rest.startswith(op)), None)
        if operator is None or (index > start and operator.startswith("&")):
            return None
        if rest.startswith("<<") and operator != "<<<":
            raise _Reject  # here-document
        self.i = index + len(operator)
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        if self.i >= len(s) or s[self.i] in _STOP:
            raise _Reject
        if operator == ">&":
            target_start = self.i
            while self.i < len(s) and s[self.i] not in _STOP and s[self.i] not in " \t":
                self.i += 1
            target = s[target_start : self.i]
            if target.isdigit():
                return Redirect(operator, None)
            raise _Reject
        target = self.word()
        if self.i < len(s) and s[self.i] in "<>":
            raise _Reject  # "> 2>&1": a syntax error to bash, left to bashlex to refuse
        return Redirect(operator, target)

    def word(self) -> Word:
        s = self.s
        n = len(s)
        text: list[str] = []
        parameters: list[str] = []
        substituted = pattern = False
        tilde = self.i < n and s[self.i] == "~"
        if self.i < n and s[self.i] == "#":
            raise _Reject  # a comment
        while self.i < n and s[self.i] not in _STOP:
            char = s[self.i]
            if char == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise _Reject
                text.append(s[self.i + 1 : end])
                self.i = end + 1
            elif char == '"':
                self.i += 1
                while True:
                    if self.i >= n:
                        raise _Reject
                    char = s[self.i]
                    if char == '"':
                        self.i += 1
                        break
                    if char in "`\\":
                        raise _Reject
                    if char == "$":
                        parameters.append(self.parameter(text))
                        substituted = True
                        continue
                    text.append(char)
                    self.i += 1
            elif char == "$":
                parameters.append(self.parameter(text))
                substituted = True
            elif char == "{" and s[self.i + 1 : self.i + 2] == "}":
                text.append("{}")  # find's placeholder: no brace expansion
                self.i += 2
            elif char in _REJECT:
                raise _Reject
            else:
                if char in "*?" or (char == "[" and self.closes(self.i)):
                    pattern = True
                text.append(char)
                self.i += 1
        return Word("".join(text), substituted, tuple(parameters), pattern, tilde)

    def closes(self, index: int) -> bool:
        """A ``]`` later in the same word makes ``[`` a glob."""
        s = self.s
        for position in range(index + 1, len(s)):
            if s[position] in _STOP:
                return False
            if s[position] == "]":
                return True
        return False

    def parameter(self, text: list[str]) -> str:
        """A ``$NAME``, ``${NAME}`` or ``$?``-style parameter at ``self.i``, copied
        into ``text`` as written; anything else (``$(``, ``${x:-y}``) rejects."""
        s = self.s
        following = s[self.i + 1 : self.i + 2]
        if following == "{":
            match = _NAME.match(s, self.i + 2)
            if match is None or s[match.end() : match.end() + 1] != "}":
                raise _Reject
            text.append(s[self.i : match.end() + 1])
            self.i = match.end() + 1
            return match.group(0)
        match = _NAME.match(s, self.i + 1)
        if match is not None:
            text.append(s[self.i : match.end()])
            self.i = match.end()
            return match.group(0)
        if following and following in _SPECIAL_PARAMETERS:
            text.append(s[self.i : self.i + 2])
            self.i += 2
            return following
        raise _Reject
