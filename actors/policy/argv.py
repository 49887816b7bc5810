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


def network_hosts(name: str, args: list[str]) -> list[str]:
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


def git_words(args: list[str]) -> list[str]:
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
