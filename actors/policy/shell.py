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
from collections.abc import Sequence

import msgspec

from actors.policy.argv import (
    after_xargs_options,
    git_words,
    has_c_option,
    is_world_writable,
    network_hosts,
    strip_assignments,
    unwrap,
)
from actors.policy.categories import Category, worst
from actors.policy.command_tables import (
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
from actors.policy.shell_parse import SimpleCommand, parse_line, split_words

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


# --- classifying -----------------------------------------------------------------


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
            simples = list(parse_line(command))
        except Exception:  # bashlex raises several kinds; any of them means "fall back"
            self.fully_parsed = False
            self.raise_to("write", "not fully parsed; classified word by word")
            simples = list(split_words(command))
        for simple in simples:
            self.simple(simple, depth)

    def simple(self, simple: SimpleCommand, depth: int) -> None:
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
        argv = strip_assignments(argv)
        if not argv:
            return
        argv = unwrap(argv)
        if not argv:
            return
        name = posixpath.basename(argv[0])
        args = argv[1:]
        if name == "xargs":
            inner = after_xargs_options(args)
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
            index = next(i for i, a in enumerate(args) if a == "-c" or has_c_option(a))
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
        if name == "chmod" and any(is_world_writable(a) for a in args):
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
        hosts = network_hosts(name, args)
        if hosts and all(is_loopback(host) for host in hosts):
            self.raise_to("write", f"{name} to loopback only")
            return
        if name == "rsync" and not hosts:
            self.raise_to("write")
            return
        shown = ", ".join(h for h in hosts if h) or "an unknown host"
        self.raise_to("admin", f"network access ({name} to {shown})")

    def git(self, args: list[str]) -> None:
        words = git_words(args)
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
