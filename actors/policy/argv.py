"""Reading a command's arguments as the program reads them: options (clustered
short flags, glued values ``-xhost``, ``--output=f``, GNU abbreviations), operands,
and the wrappers that run another command (``env``, ``timeout``, ``taskset``,
``script -qc`` ...), unwrapped to the command they run.
"""

from __future__ import annotations

import re

import msgspec

from actors.policy.command_tables import Grammar
from actors.policy.shell_parse import Word


class Parsed(msgspec.Struct, frozen=True):
    """``options``: (name, value) in order, short options as ``-x``, long as
    ``--name`` (canonical when abbreviated); ``operands``: the other words;
    ``rest``: with ``stop_at_operand``, the words from the first operand on."""

    options: tuple[tuple[str, Word | None], ...]
    operands: tuple[Word, ...]
    rest: tuple[Word, ...] = ()

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[Word]:
        return [value for name, value in self.options if name in names and value is not None]


def _part(word: Word, text: str) -> Word:
    """A piece of ``word`` (a glued value): the same expansions, as far as known."""
    return Word(text, (word.substituted and "$" in text) or "`" in text, word.parameters,
                word.pattern, text.startswith("~"))  # fmt: skip


def parse(words: list[Word], grammar: Grammar, stop_at_operand: bool = False) -> Parsed:
    """Options and operands of ``words`` under ``grammar``."""
    options: list[tuple[str, Word | None]] = []
    operands: list[Word] = []
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        index += 1
        if text == "--":
            operands.extend(words[index:])
            break
        if text.startswith("--") and len(text) > 2:
            name, equals, value = text.partition("=")
            canonical = _long_name(name[2:], grammar)
            if equals:
                options.append((f"--{canonical}", _part(word, value)))
            elif canonical in grammar.long_values and index < len(words):
                options.append((f"--{canonical}", words[index]))
                index += 1
            else:
                options.append((f"--{canonical}", None))
            continue
        if text.startswith("-") and len(text) > 1 and not word.substituted:
            letters = text[1:]
            for position, letter in enumerate(letters):
                glued = letters[position + 1 :]
                if letter in grammar.values:
                    if glued:
                        options.append((f"-{letter}", _part(word, glued)))
                    elif index < len(words):
                        options.append((f"-{letter}", words[index]))
                        index += 1
                    else:
                        options.append((f"-{letter}", None))
                    break
                if letter in grammar.optional:
                    options.append((f"-{letter}", _part(word, glued) if glued else None))
                    break
                options.append((f"-{letter}", None))
            continue
        if stop_at_operand:
            return Parsed(tuple(options), tuple(operands), tuple(words[index - 1 :]))
        operands.append(word)
    return Parsed(tuple(options), tuple(operands))


def _long_name(name: str, grammar: Grammar) -> str:
    if name in grammar.long_values or not grammar.abbreviations:
        return name
    candidates = [option for option in grammar.long_values if option.startswith(name)]
    return candidates[0] if len(candidates) == 1 else name if not candidates else name + "*"


def split_flags(args: tuple[str, ...] | list[str]) -> set[str]:
    """``-rf`` counts as ``-r`` and ``-f``; long options stay whole."""
    flags: set[str] = set()
    for arg in args:
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{letter}" for letter in arg[1:])
    return flags


def is_world_writable(mode: str) -> bool:
    if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", mode):
        return True
    return bool(re.fullmatch(r"[ugoa]*[+=][rwxXst]*w[rwxXst]*", mode)) and (
        mode.startswith(("a", "o", "+", "=")) or "o" in mode.split("+")[0]
    )


ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class Wrapper(msgspec.Struct, frozen=True):
    """A program that runs the command in its arguments. ``skip``: operands before
    the command (``timeout 5 cmd``: one); ``no_command``: options after which
    there is no command (``taskset -p``)."""

    grammar: Grammar
    skip: int = 0
    no_command: frozenset[str] = frozenset()


def _w(values: str = "", long_values: str = "", skip: int = 0, no_command: str = "",
       optional: str = "") -> Wrapper:  # fmt: skip
    grammar = Grammar(values, optional, frozenset(long_values.split()))
    return Wrapper(grammar, skip, frozenset(no_command.split()))


# fmt: off
WRAPPERS: dict[str, Wrapper] = {
    "env": _w("uCS", "unset chdir split-string block-signal default-signal ignore-signal"),
    "timeout": _w("sk", "signal kill-after", skip=1),
    "nice": _w("n", "adjustment"),
    "ionice": _w("cnpPu", "class classdata pid pgid uid", no_command="-p -P -u --pid --pgid --uid"),
    "stdbuf": _w("ioe", "input output error"),
    "nohup": _w(),
    "setsid": _w(),
    "chrt": _w("TPD", "sched-runtime sched-period sched-deadline", skip=1,
               no_command="-p --pid"),
    "taskset": _w("", "", skip=1, no_command="-p --pid"),
    "unshare": _w("SGtR", "mount uts ipc net pid user cgroup time setuid setgid root wd "
                  "map-user map-group map-users map-groups propagation setgroups "
                  "monotonic boottime load-interp"),
    "script": _w("cETIOBm", "command echo timing log-in log-out log-io log-timing "
                 "logging-format output-limit"),
    "command": _w(),
    "builtin": _w(),
    "exec": _w("a"),
    "time": _w("fo", "format output"),
    "flock": _w("wEc", "timeout conflict-exit-code command", skip=1),
    "watch": _w("nqd", "interval differences equexit chgexit"),
    "chronic": _w(),
    "unbuffer": _w(),
    "caffeinate": _w("tw"),
    "numactl": _w("CmNpiPl", "physcpubind membind cpunodebind preferred interleave "
                  "localalloc"),
    "prlimit": _w("p", "pid"),
    "catchsegv": _w(),
    "busybox": _w(),
    "sudo": _w("ugChpPrtTUD", "user group close-from host prompt role type command-timeout "
               "other-user chdir chroot", no_command="-l -v -k -K -V -e --list --validate"),
    "doas": _w("uC"),
    "pkexec": _w("", "user"),
    "runuser": _w("ugGcsw", "user group supp-group command shell whitelist-environment"),
    "run0": _w("u", "user"),
    "xargs": _w("IaLndPsE", "arg-file delimiter max-lines max-args max-procs max-chars "
                "process-slot-var eof replace", optional="iel"),
    "nsenter": _w("tSGmuinpUCrw", "target"),
}
# fmt: on


def name_of(word: Word) -> str:
    return word.text.rsplit("/", 1)[-1]
