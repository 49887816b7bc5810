"""Reading a command's argument vector: the wrappers that run another command
(``env``, ``timeout``, ``nice``, ``xargs``...), the hosts a network tool talks to,
git's subcommand, and the option spellings the classifier looks for.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import urlsplit

from actors.policy.command_tables import _CURL_VALUE_OPTIONS


def has_c_option(arg: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]


def is_world_writable(mode: str) -> bool:
    if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", mode):
        return True
    return bool(re.fullmatch(r"[ugoa]*[+=][rwxXst]*w[rwxXst]*", mode)) and (
        mode.startswith(("a", "o", "+", "=")) or "o" in mode.split("+")[0]
    )


def strip_assignments(argv: list[str]) -> list[str]:
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


def unwrap(argv: list[str]) -> list[str]:
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
            rest = strip_assignments(rest)
        if name in ("timeout", "flock") and rest:
            rest.pop(0)  # the duration, or the lock file
        if not rest:
            return [name]
        argv = rest
    return argv


def after_xargs_options(args: list[str]) -> list[str]:
    value_options = {"-I", "-i", "-L", "-l", "-n", "-P", "-s", "-d", "-E", "-e", "-a"}
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in value_options and rest:
            rest.pop(0)
    return rest


_HOST_FIRST = frozenset({"ssh", "nc", "ncat", "netcat", "telnet"})


def operands(args: list[str], value_options: frozenset[str]) -> list[str]:
    """The words that are not options, nor the value of an option in
    ``value_options`` (``-p 22``: neither word is an operand)."""
    words: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in value_options:
            skip = True
        elif not arg.startswith("-"):
            words.append(arg)
    return words


_CURL_LIKE = frozenset({"curl", "wget", "http", "https", "aria2c"})
_HOST_FIRST_VALUE_OPTIONS = frozenset({"-p", "-i", "-o", "-l", "-F", "-J", "-w"})


def _value_options(name: str) -> frozenset[str]:
    if name in _CURL_LIKE:
        return _CURL_VALUE_OPTIONS
    if name in _HOST_FIRST:
        return _HOST_FIRST_VALUE_OPTIONS
    return frozenset()


def network_hosts(name: str, args: list[str]) -> list[str]:
    hosts = [_host_of(name, arg) for arg in operands(args, _value_options(name))]
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


_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree"})


def git_words(args: list[str]) -> list[str]:
    """git's subcommand and its operands, global options and their values skipped."""
    return operands(args, _GIT_VALUE_OPTIONS)
