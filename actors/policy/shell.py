"""What a shell command line would do: the commands it runs, the files it redirects
into, and from those a category (``read``, ``write`` or ``admin``).

The line is parsed with a real shell parser (``bashlex``), so quoting tricks
(``r''m``), lists, pipelines, subshells, command substitutions, functions and the
usual wrappers (``env``, ``xargs``, ``timeout``, ``nice``, ``bash -c``, ``eval``,
``find -exec``) are seen through. Where bashlex cannot parse a line (it lacks
``case`` and arithmetic expansion) a conservative word splitter takes over and the
verdict says so. Classification is advice: what it cannot see (a script's
contents, a program that deletes files itself, aliases) is listed in
docs/decisions.md, and the OS sandbox is the boundary that holds.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

import bashlex
import msgspec

from actors.policy.categories import Category, worst
from actors.policy.command_tables import (
    _CURL_VALUE_OPTIONS,
    DESTINATION_LAST,
    GIT_NETWORK,
    GIT_READ,
    HARMLESS_DEVICES,
    LOOPBACK,
    NETWORK,
    PRIVILEGE,
    READ_ONLY,
    SENSITIVE_HOME,
    SHELLS,
    SYSTEM_ADMIN,
    SYSTEM_PATHS,
    WRITERS,
)

MAX_NESTING = 8
"""``bash -c "bash -c ..."`` deeper than this is refused as admin, not recursed."""


class Invocation(msgspec.Struct, frozen=True):
    """One simple command as it would run: its argument vector after unwrapping
    (``env X=1 timeout 5 rm x`` is ``("rm", "x")``)."""

    argv: tuple[str, ...]


class ShellVerdict(msgspec.Struct, frozen=True):
    """The category of a command line and why; ``invocations`` feed the blocklist."""

    category: Category
    reasons: tuple[str, ...] = ()
    invocations: tuple[Invocation, ...] = ()
    fully_parsed: bool = True


class _Simple(msgspec.Struct, frozen=True):
    argv: tuple[str, ...]
    dynamic_name: bool
    redirects: tuple[str, ...]


# --- what kind of command is it -------------------------------------------------


def is_system_path(path: str) -> bool:
    """An absolute path the system owns (devices such as /dev/null excepted)."""
    if path.startswith("~"):
        return any(path == p or path.startswith(p + "/") for p in SENSITIVE_HOME)
    if not path.startswith("/"):
        return False
    normal = posixpath.normpath(path)
    if normal in HARMLESS_DEVICES or normal.startswith("/dev/fd/"):
        return False
    if normal == "/":
        return True
    return any(normal == p or normal.startswith(p + "/") for p in SYSTEM_PATHS)


def is_loopback(host: str | None) -> bool:
    return bool(host) and LOOPBACK.match(host or "") is not None


def split_flags(args: Sequence[str]) -> set[str]:
    """``-rf`` counts as ``-r`` and ``-f``; long options stay whole."""
    flags: set[str] = set()
    for arg in args:
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{letter}" for letter in arg[1:])
    return flags


# --- parsing ---------------------------------------------------------------------


CACHED_LINE_CHARS = 2048
"""Lines up to this long are remembered, the last 32 of them: models run the same
few commands again and again. A bigger cache costs more than it saves: every
verdict it holds is more for the garbage collector to walk (measured: 512 held
verdicts made each new line cost four times as much)."""


def classify_command(command: str) -> ShellVerdict:
    """The category of ``command`` and the reasons for it."""
    if len(command) <= CACHED_LINE_CHARS:
        return _classify_remembered(command)
    return _Classifier().run(command, depth=0)


@functools.lru_cache(maxsize=32)
def _classify_remembered(command: str) -> ShellVerdict:
    """The verdict is pure data of the line alone, so a repeated line costs a lookup."""
    return _Classifier().run(command, depth=0)


class _Classifier:
    def __init__(self) -> None:
        self.category: Category = "read"
        self.reasons: list[str] = []
        self.invocations: list[Invocation] = []
        self.fully_parsed = True

    def raise_to(self, category: Category, reason: str | None = None) -> None:
        self.category = worst(self.category, category)
        if reason and reason not in self.reasons:
            self.reasons.append(reason)

    def run(self, command: str, depth: int) -> ShellVerdict:
        self.feed(command, depth)
        return ShellVerdict(
            self.category, tuple(self.reasons), tuple(self.invocations), self.fully_parsed
        )

    def feed(self, command: str, depth: int) -> None:
        if depth > MAX_NESTING:
            self.raise_to("admin", "shell commands nested too deeply to follow")
            return
        if not command.strip():
            return
        try:
            simples = list(_parse(command))
        except Exception:  # bashlex raises several kinds; any of them means "fall back"
            self.fully_parsed = False
            self.raise_to("write", "not fully parsed; classified word by word")
            simples = list(_fallback(command))
        for simple in simples:
            self.simple(simple, depth)

    def simple(self, simple: _Simple, depth: int) -> None:
        for target in simple.redirects:
            if is_system_path(target):
                self.raise_to("admin", f"writes to system path {target}")
            elif target not in HARMLESS_DEVICES and not target.startswith("/dev/fd/"):
                self.raise_to("write", "redirects output to a file")
        if simple.dynamic_name:
            self.raise_to("admin", "command name computed at run time")
            return
        self.argv(list(simple.argv), depth, via_xargs=False)

    def argv(self, argv: list[str], depth: int, via_xargs: bool) -> None:
        argv = _strip_assignments(argv)
        if not argv:
            return
        argv = _unwrap(argv)
        if not argv:
            return
        name = posixpath.basename(argv[0])
        args = argv[1:]
        if name == "xargs":
            inner = _after_xargs_options(args)
            if not inner:
                self.raise_to("write", "xargs runs echo")
                return
            self.argv(inner, depth, via_xargs=True)
            return
        self.invocations.append(Invocation((name, *args)))
        if name in PRIVILEGE:
            self.raise_to("admin", f"privilege escalation ({name})")
            if name == "su":
                if "-c" in args and args.index("-c") + 1 < len(args):
                    self.feed(args[args.index("-c") + 1], depth + 1)
                return
            inner = list(args)
            while inner and inner[0].startswith("-"):
                option = inner.pop(0)
                if option in ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U") and inner:
                    inner.pop(0)
            if inner:
                self.argv(inner, depth, via_xargs)
            return
        if name in SHELLS or name == "eval":
            self.shell(name, args, depth)
            return
        if name in ("find",):
            self.find(args, depth)
            return
        self.named(name, args, via_xargs)

    def shell(self, name: str, args: list[str], depth: int) -> None:
        if name == "eval":
            self.feed(" ".join(args), depth + 1)
            return
        if "-c" in args or any(a.startswith("-") and "c" in a[1:] for a in args[:1]):
            index = next(i for i, a in enumerate(args) if a == "-c" or _has_c(a))
            script = args[index + 1] if index + 1 < len(args) else ""
            self.feed(script, depth + 1)
            return
        if not [a for a in args if not a.startswith("-")]:
            self.raise_to("admin", f"{name} reads commands from its input")
            return
        self.raise_to("write", f"runs a script with {name}")

    def find(self, args: list[str], depth: int) -> None:
        if "-delete" in args:
            self.raise_to("admin", "find -delete removes files")
        for index, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                inner: list[str] = []
                for word in args[index + 1 :]:
                    if word in (";", "+", "\\;"):
                        break
                    inner.append(word)
                if inner:
                    self.argv(inner, depth, via_xargs=True)
        if any(a in ("-fprint", "-fprintf", "-fls") for a in args):
            self.raise_to("write", "find writes a file")

    def named(self, name: str, args: list[str], via_xargs: bool) -> None:
        positional = [a for a in args if not a.startswith("-")]
        if name in SYSTEM_ADMIN or name.startswith("mkfs"):
            self.raise_to("admin", f"system administration ({name})")
            return
        if name in NETWORK:
            self.network(name, args)
            return
        if name == "git":
            self.git(args)
            return
        if name == "rm":
            flags = split_flags(args)
            if flags & {"-r", "-R", "--recursive"}:
                self.raise_to("admin", "recursive delete (rm -r)")
            elif via_xargs:
                self.raise_to("admin", "deletes files listed at run time")
        if name == "chmod" and any(_world_writable(a) for a in args):
            self.raise_to("admin", "makes files writable by everyone (chmod)")
        if name in ("chown", "chgrp") and split_flags(args) & {"-R", "--recursive"}:
            self.raise_to("admin", f"recursive ownership change ({name})")
        if name in WRITERS:
            if name == "sed" and not (split_flags(args) & {"-i", "--in-place"}):
                return
            targets = positional[-1:] if name in DESTINATION_LAST else positional
            for target in targets:
                if is_system_path(target):
                    self.raise_to("admin", f"writes to system path {target}")
            self.raise_to("write")
            return
        if name in READ_ONLY and not via_xargs:
            return
        self.raise_to("write")

    def network(self, name: str, args: list[str]) -> None:
        hosts = _network_hosts(name, args)
        if hosts and all(is_loopback(host) for host in hosts):
            self.raise_to("write", f"{name} to loopback only")
            return
        if name == "rsync" and not hosts:
            self.raise_to("write")
            return
        shown = ", ".join(h for h in hosts if h) or "an unknown host"
        self.raise_to("admin", f"network access ({name} to {shown})")

    def git(self, args: list[str]) -> None:
        words = _git_words(args)
        sub = words[0] if words else ""
        if sub in GIT_NETWORK:
            self.raise_to("admin", f"git {sub} talks to a remote")
        elif sub == "reset" and "--hard" in args:
            self.raise_to("admin", "git reset --hard discards work")
        elif sub == "clean" and split_flags(args) & {"-f", "--force"}:
            self.raise_to("admin", "git clean -f deletes untracked files")
        elif sub in ("checkout", "restore") and ("." in words or "--" in args):
            self.raise_to("admin", f"git {sub} discards changes")
        elif sub in GIT_READ or not sub:
            return
        else:
            self.raise_to("write")


def _has_c(arg: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]


def _world_writable(mode: str) -> bool:
    if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", mode):
        return True
    return bool(re.fullmatch(r"[ugoa]*[+=][rwxXst]*w[rwxXst]*", mode)) and (
        mode.startswith(("a", "o", "+", "=")) or "o" in mode.split("+")[0]
    )


def _strip_assignments(argv: list[str]) -> list[str]:
    index = 0
    while index < len(argv) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[index]):
        index += 1
    return argv[index:]


_WRAPPER_VALUE_OPTIONS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "stdbuf": set(),
    "nohup": set(),
    "time": {"-f", "--format", "-o", "--output"},
    "command": set(),
    "exec": {"-a"},
    "builtin": set(),
    "setsid": set(),
    "chronic": set(),
    "unbuffer": set(),
    "caffeinate": set(),
    "flock": {"-w", "--timeout", "-E"},
}


def _unwrap(argv: list[str]) -> list[str]:
    """Strip wrappers that run another command (``env A=1 nice -n 5 timeout 3 rm x``)."""
    for _ in range(16):
        name = posixpath.basename(argv[0])
        if name not in _WRAPPER_VALUE_OPTIONS:
            return argv
        if name == "command" and any(a in ("-v", "-V") for a in argv[1:2]):
            return []
        value_options = _WRAPPER_VALUE_OPTIONS[name]
        rest = argv[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-":
            option = rest.pop(0)
            if option == "--":
                break
            if option in value_options and rest:
                rest.pop(0)
        if name == "env":
            rest = _strip_assignments(rest)
        if name in ("timeout", "flock") and rest:
            rest.pop(0)  # the duration, or the lock file
        if not rest:
            return [name]
        argv = rest
    return argv


def _after_xargs_options(args: list[str]) -> list[str]:
    value_options = {"-I", "-i", "-L", "-l", "-n", "-P", "-s", "-d", "-E", "-e", "-a"}
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in value_options and rest:
            rest.pop(0)
    return rest


_HOST_FIRST = frozenset({"ssh", "nc", "ncat", "netcat", "telnet"})


def _network_hosts(name: str, args: list[str]) -> list[str]:
    hosts: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if name in ("curl", "wget", "http", "https", "aria2c") and arg in _CURL_VALUE_OPTIONS:
            skip = True
            continue
        if name in _HOST_FIRST and arg in ("-p", "-i", "-o", "-l", "-F", "-J", "-w"):
            skip = True
            continue
        if arg.startswith("-"):
            continue
        hosts.append(_host_of(name, arg))
    if name in ("scp", "rsync"):
        return [h for h in hosts if h]
    if name in ("ssh", "telnet", "nc", "ncat", "netcat", "sftp", "ftp"):
        return hosts[:1]
    return [h for h in hosts if h] or hosts


def _host_of(name: str, arg: str) -> str:
    if "://" in arg:
        return urlsplit(arg).hostname or ""
    if name in ("scp", "rsync"):
        match = re.match(r"^(?:[^@/:]+@)?(\[[^\]]+\]|[^/:]+):", arg)
        return match.group(1).strip("[]") if match else ""
    if name in ("ssh", "sftp"):
        return arg.rsplit("@", 1)[-1]
    return arg.split("/", 1)[0].split(":", 1)[0] if name not in ("nc", "ncat", "netcat",
                                                                 "telnet") else arg  # fmt: skip


def _git_words(args: list[str]) -> list[str]:
    words: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-C", "-c", "--git-dir", "--work-tree"):
            skip = True
            continue
        if not arg.startswith("-"):
            words.append(arg)
    return words


def _parse(command: str) -> Iterator[_Simple]:
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


def _plain(command: str) -> list[_Simple] | None:
    """The simple commands of a line with nothing for a shell to expand (no
    quotes, ``$``, globs, redirections, groups or reserved words): the words
    bashlex would give, found in microseconds instead of milliseconds. None
    when the line needs the real parser."""
    line = command.strip()
    if not _PLAIN_LINE.fullmatch(line):
        return None
    simples: list[_Simple] = []
    for segment in _PLAIN_OPERATORS.split(line.removesuffix(";")):
        words = segment.split()
        if not words or words[0] in _RESERVED:
            return None
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        if words:
            simples.append(_Simple(tuple(words), False, ()))
    return simples


def _walk(node: object) -> Iterator[_Simple]:
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


def _command(node: object) -> Iterator[_Simple]:
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
        yield _Simple(tuple(argv), dynamic_name, tuple(redirects))


def _is_dynamic(word: object) -> bool:
    return any(
        p.kind in ("parameter", "commandsubstitution", "processsubstitution")
        for p in getattr(word, "parts", ())
    )


def _substitutions(node: object) -> Iterator[_Simple]:
    for part in getattr(node, "parts", None) or ():
        if part.kind in ("commandsubstitution", "processsubstitution"):
            yield from _walk(part.command)
        else:
            yield from _substitutions(part)


_SEPARATORS = re.compile(r"\|\||&&|[;|&()\n`{}]|\$\(")


def _fallback(command: str) -> Iterator[_Simple]:
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
        yield _Simple(tuple(argv), bool(argv) and argv[0].startswith("$"), tuple(redirects))
