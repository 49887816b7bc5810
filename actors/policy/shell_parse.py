"""A shell line's simple commands, as a shell would run them: each one's words
(with what the shell would still expand in them), its assignments, its
redirections, and the functions the line defines.

``bashlex`` is the parser; a line with nothing for a shell to expand skips it (the
same words in microseconds instead of milliseconds). A line bashlex cannot parse
(``case``, arithmetic expansion, ``[[``, ``time``) raises :class:`Unparsed`: the
classifier does not guess at it, it asks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from actors.policy.shell_lex import quick_parse
from actors.policy.shell_words import FunctionDef, Item, Redirect, SimpleCommand, Word

__all__ = ["FunctionDef", "Item", "Redirect", "SimpleCommand", "Unparsed", "Word", "parse_line"]


class Unparsed(ValueError):
    """bashlex could not parse the line (the message says where)."""


def parse_line(command: str) -> list[Item]:
    """The simple commands and function definitions of ``command``, in order;
    raises :class:`Unparsed` when bashlex cannot parse it."""
    plain = _plain(command)
    if plain is not None:
        return plain
    quick = quick_parse(command)
    if quick is not None:
        return list(quick)
    command = _ARITHMETIC.sub(_arithmetic, command)
    import bashlex  # here: a tenth of a second to import, and most lines never need it

    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises several kinds; each means "not understood"
        raise Unparsed(f"{type(exc).__name__}: {exc}") from None
    walker = _Walker(command)
    items: list[Item] = []
    for tree in trees:
        items.extend(walker.walk(tree, background=False))
    return items


_PLAIN_LINE = re.compile(
    r"[A-Za-z0-9_./=:,@%+ \t-]+(?:(?:\|\||&&|[|;])[A-Za-z0-9_./=:,@%+ \t-]+)*;?"
)
_PLAIN_OPERATORS = re.compile(r"(\|\||&&|[|;])")
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
        "!",
    ]
)


def _plain(command: str) -> list[Item] | None:
    """The simple commands of a line with nothing for a shell to expand (no
    quotes, ``$``, globs, braces, ``~``, redirections, pipes, groups or reserved
    words): the words bashlex would give, found in microseconds. None when the
    line needs the real parser."""
    line = command.strip()
    if not _PLAIN_LINE.fullmatch(line):
        return None
    simples: list[Item] = []
    pieces = _PLAIN_OPERATORS.split(line.removesuffix(";"))
    for index in range(0, len(pieces), 2):
        words = pieces[index].split()
        if not words or words[0] in _RESERVED:
            return None
        assignments: list[Word] = []
        while words and _ASSIGNMENT.match(words[0]):
            assignments.append(Word(words.pop(0)))
        piped = "|" in (
            pieces[index - 1] if index else "",
            pieces[index + 1] if index + 1 < len(pieces) else "",
        )
        simples.append(SimpleCommand(tuple(Word(w) for w in words), tuple(assignments), (), piped))
    return simples


_ARITHMETIC = re.compile(r"\$\(\(([^()]*(?:\([^()]*\)[^()]*)*)\)\)")
_PLAIN_ARITHMETIC = re.compile(r"[\w\s+\-*/%<>=!&|^~?:,.$()]*")


def _arithmetic(match: re.Match[str]) -> str:
    """``$((6*7))`` as a parameter (its value is a number known at run time),
    which bashlex can parse; an expression that could run code (``$(...)``, an
    array index, quotes) is left for bashlex to refuse."""
    inner = match.group(1)
    if "$(" in inner or not _PLAIN_ARITHMETIC.fullmatch(inner):
        return match.group(0)
    return "${_arithmetic_}"


def _unquoted_pattern(raw: str) -> bool:
    """Whether ``raw`` (a word as written) holds a glob (``*``, ``?``, ``[...]``) or
    a brace expansion (``{a,b}``, ``{1..3}``) outside quotes and not escaped."""
    quote = ""
    escaped = False
    for index, char in enumerate(raw):
        if escaped:
            escaped = False
        elif char == "$" and not quote and raw[index + 1 : index + 2] in ("?", "*"):
            escaped = True  # $? and $* are parameters, not globs
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif (
            char in "*?"
            or (char == "[" and "]" in raw[index + 1 :])
            or (char == "{" and _BRACE.match(raw, index))
        ):
            return True
    return False


_BRACE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")


class _Walker:
    def __init__(self, source: str) -> None:
        self.source = source

    def walk(self, node: object, background: bool) -> Iterator[Item]:
        kind = getattr(node, "kind", "")
        if kind == "command":
            yield from self.command(node, background)
            return
        if kind == "function":
            name = getattr(node.parts[0], "word", "")  # type: ignore[attr-defined]
            body: list[SimpleCommand] = []
            for part in node.parts[1:]:  # type: ignore[attr-defined]
                for item in self.walk(part, background=False):
                    if isinstance(item, SimpleCommand):
                        body.append(item)
                    else:
                        body.extend(item.body)
            yield FunctionDef(name, tuple(body))
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            yield from self.walk(node.command, background=True)  # type: ignore[attr-defined]
            return
        if kind == "pipeline":
            for child in node.parts:  # type: ignore[attr-defined]
                yield from self.walk(child, background=True)
            return
        if kind == "list":
            parts = list(node.parts)  # type: ignore[attr-defined]
            for index, child in enumerate(parts):
                following = parts[index + 1] if index + 1 < len(parts) else None
                backgrounded = (
                    getattr(following, "kind", "") == "operator"
                    and getattr(following, "op", "") == "&"
                )
                yield from self.walk(child, background or backgrounded)
            return
        for child in _children(node):
            yield from self.walk(child, background)

    def word(self, node: object) -> Word:
        parts = getattr(node, "parts", None) or ()
        kinds = {getattr(p, "kind", "") for p in parts}
        start, end = node.pos  # type: ignore[attr-defined]
        raw = self.source[start:end]
        text = unquote(raw) if any(c in raw for c in "'\"\\") else node.word  # type: ignore[attr-defined]
        return Word(
            text,
            substituted=bool(kinds & {"parameter", "commandsubstitution", "processsubstitution"}),
            parameters=tuple(p.value for p in parts if getattr(p, "kind", "") == "parameter"),
            pattern=_unquoted_pattern(raw),
            tilde="tilde" in kinds,
        )

    def command(self, node: object, background: bool) -> Iterator[Item]:
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = []
        for part in node.parts:  # type: ignore[attr-defined]
            kind = part.kind
            if kind == "word":
                words.append(self.word(part))
                yield from self.substitutions(part)
            elif kind == "assignment":
                assignments.append(self.word(part))
                yield from self.substitutions(part)
            elif kind == "redirect":
                output = part.output
                target = self.word(output) if getattr(output, "kind", "") == "word" else None
                redirects.append(Redirect(part.type, target))
                if hasattr(output, "kind"):
                    yield from self.substitutions(output)
        yield SimpleCommand(tuple(words), tuple(assignments), tuple(redirects), background)

    def substitutions(self, node: object) -> Iterator[Item]:
        for part in getattr(node, "parts", None) or ():
            if part.kind in ("commandsubstitution", "processsubstitution"):
                yield from self.walk(part.command, background=True)
            else:
                yield from self.substitutions(part)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
            "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


def unquote(raw: str) -> str:
    """A word as written, after the shell's quote removal (``"a"'b'`` is ``ab``,
    ``$'\\x2e'`` is ``.``), with parameters and substitutions left as written.
    bashlex's own text is wrong for some mixes of quotes (``"a"'b'`` gives
    ``a'b'``), which would hide a name such as ``.ssh`` from the hidden-path check."""
    out: list[str] = []
    index = 0
    quote = ""
    while index < len(raw):
        char = raw[index]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(char)
            index += 1
        elif char == "\\":
            following = raw[index + 1 : index + 2]
            if quote == '"' and following not in ("$", "`", '"', "\\", "\n"):
                out.append(char)
            elif following != "\n":
                out.append(following)
            index += 2
        elif char == "$" and raw[index + 1 : index + 2] == "'" and not quote:
            index = _ansi_c(raw, index + 2, out)
        elif char == "$" and raw[index + 1 : index + 2] in ("(", "{"):
            end = _closing(raw, index + 1)
            out.append(raw[index:end])
            index = end
        elif char == "`":
            end = raw.find("`", index + 1)
            end = len(raw) if end < 0 else end + 1
            out.append(raw[index:end])
            index = end
        elif char == '"':
            quote = "" if quote == '"' else '"'
            index += 1
        elif char == "'" and not quote:
            quote = "'"
            index += 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _closing(raw: str, start: int) -> int:
    """The index after the bracket matching the one at ``start``."""
    opening = raw[start]
    closing = ")" if opening == "(" else "}"
    depth = 0
    for index in range(start, len(raw)):
        if raw[index] == opening:
            depth += 1
        elif raw[index] == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    return len(raw)


def _ansi_c(raw: str, index: int, out: list[str]) -> int:
    """Decode a ``$'...'`` string from ``index`` (after the quote) into ``out``."""
    while index < len(raw) and raw[index] != "'":
        char = raw[index]
        if char != "\\" or index + 1 >= len(raw):
            out.append(char)
            index += 1
            continue
        following = raw[index + 1]
        if following in "xuU":
            longest = {"x": 2, "u": 4, "U": 8}[following]
            digits = re.match(f"[0-9a-fA-F]{{1,{longest}}}", raw[index + 2 :])
            if digits:
                out.append(chr(int(digits.group(0), 16)))
                index += 2 + len(digits.group(0))
                continue
        octal = re.match(r"[0-7]{1,3}", raw[index + 1 :])
        if octal:
            out.append(chr(int(octal.group(0), 8)))
            index += 1 + len(octal.group(0))
            continue
        out.append(_ESCAPES.get(following, "\\" + following))
        index += 2
    return index + 1


def _children(node: object) -> Iterator[object]:
    for attribute in ("parts", "list"):
        yield from getattr(node, attribute, None) or ()
    for attribute in ("command", "output", "body"):
        child = getattr(node, attribute, None)
        if child is not None and hasattr(child, "kind"):
            yield child


def expand_braces(text: str, limit: int = 64) -> list[str] | None:
    """The words a brace expansion gives (``{a,b}c`` -> ``ac bc``), or None when
    it holds a sequence (``{1..9}``) or gives more than ``limit`` words. Quotes are
    already removed, so this sees the word as :class:`Word.text` has it."""
    match = re.search(r"\{([^{}]*)\}", text)
    if match is None:
        return [text]
    inner = match.group(1)
    if ".." in inner and "," not in inner:
        return None
    if "," not in inner:
        rest = expand_braces(text[match.end() :], limit)
        if rest is None:
            return None
        return [text[: match.end()] + r for r in rest]
    results: list[str] = []
    for choice in inner.split(","):
        expanded = expand_braces(text[: match.start()] + choice + text[match.end() :], limit)
        if expanded is None:
            return None
        results.extend(expanded)
        if len(results) > limit:
            return None
    return results
