"""The bash the SSH environment runs on the remote side, built as plain strings.

Every remote command is a small wrapper fed to ``bash -s`` on stdin (so the login
shell may be anything and the command's size is not bounded by ARG_MAX). The
wrapper starts the command as the leader of its own process group,
reports the group id and, when the leader exits, the exit status on stderr behind a
per-call nonce, and then ends whatever is left of the group (SIGTERM, 2 s, SIGKILL)
so that a background grandchild cannot hold the channel open. A report that cannot
be written (the channel is gone) makes the wrapper end the group at once; a report
lost on the way is made up for by the call's nonce in the wrapper's command line
(:class:`LostCall`). Killing by group from
a second channel works for root and non-root logins alike, where sshd's signal
requests do not (OpenSSH before 10.0 refuses them for root).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping

import msgspec

from environments.envvars import EnvPolicy
from environments.errors import InvalidRequest

_ALIVE = (
    # Whether any of the groups given as arguments has a member that is not a zombie.
    # kill -0 fails at once for a group with no member at all (the usual case after
    # the leader was reaped); only then is ps asked, once for all of them, whether
    # the members left are zombies.
    '__troupe_alive() { local __g __left=; for __g in "$@"; do '
    'kill -0 -- "-$__g" 2>/dev/null && __left="$__left $__g"; done; '
    '[ -n "$__left" ] || return 1; command -v ps >/dev/null 2>&1 || return 0; '
    'ps -eo pgid=,stat= | awk -v gs="$__left" '
    '\'BEGIN {n = split(gs, a, " "); for (i = 1; i <= n; i++) w[a[i]] = 1} '
    "($1 in w) && $2 !~ /^Z/ {f = 1} END {exit !f}'; }"
)


_SAME_PROCESS = (
    # True unless pid $1 is now a different process than the one started at tick $2.
    # A group id cannot be handed to a new process while any member of the group
    # lives, so a missing leader (or a host without /proc) means "still ours".
    '__troupe_same() { [ -n "$2" ] || return 0; local __s __want="$2"; '
    'read -r __s 2>/dev/null < "/proc/$1/stat" || return 0; '
    '__s=${__s##*) }; set -- $__s; [ "${20}" = "$__want" ]; }'
)

_START_TIME = (
    # The leader's start time (clock ticks since boot, field 22 of /proc/PID/stat):
    # with the pid it names the process for good, so a reused pid is never killed.
    '__start=; if read -r __st 2>/dev/null < "/proc/$__pid/stat"; then '
    "__st=${__st##*) }; set -- $__st; __start=${20}; fi"
)

_REMOTE_CORE = "PATH|HOME|USER|LOGNAME|SHELL|LANG|TERM|TMPDIR|LC_*|SSH_AUTH_SOCK"
"""Variables a remote command keeps under the "core" policy (a bash case pattern);
SSH_AUTH_SOCK so that a forwarded agent reaches the command."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _case_pattern(glob: str) -> str:
    """A bash ``case`` pattern matching ``glob``: ``*`` and ``?`` stay wildcards,
    every other character is escaped, so a pattern can never end the case clause."""
    return "".join(c if c in "*?" or c.isalnum() or c == "_" else "\\" + c for c in glob)


def _variable_name(name: str) -> str:
    if not _NAME.match(name):
        raise InvalidRequest(f"invalid environment variable name {name!r}")
    return name


def _end_groups(groups: str, settle: float, grace: float) -> str:
    """Bash that ends the groups listed in ``$groups`` (a shell word list): TERM, up
    to ``grace`` seconds, KILL, and then waits (bounded) until nothing of them runs,
    so that whoever asked for the kill may rely on it being done."""
    steps = max(1, round(grace / 0.1))
    return (
        f"if __troupe_alive {groups}; then sleep {settle}; "
        f'for __g in {groups}; do kill -TERM -- "-$__g" 2>/dev/null; '
        # A stopped member would hold TERM until the KILL: let it act on it now.
        f'kill -CONT -- "-$__g" 2>/dev/null; done; '
        f"for __i in $(seq {steps}); do __troupe_alive {groups} || break; sleep 0.1; done; "
        f'for __g in {groups}; do kill -KILL -- "-$__g" 2>/dev/null; done; '
        f"for __i in $(seq 50); do __troupe_alive {groups} || break; sleep 0.1; done; fi"
    )


class Markers(msgspec.Struct, frozen=True):
    """The marker lines of one call; the nonce keeps a command from forging them."""

    nonce: str

    @property
    def tag(self) -> str:
        """A word that names the call in its wrapper's command line (see
        :class:`LostCall`)."""
        return self.line("CALL")

    @property
    def prefix(self) -> bytes:
        return f"__TROUPE_{self.nonce}_".encode()

    def line(self, kind: str) -> str:
        return f"__TROUPE_{self.nonce}_{kind}__"


def _listed_pattern(name: str) -> str:
    """A bash case pattern for one allowlist entry (``LC_*`` keeps a prefix)."""
    if name.endswith("*"):
        return _case_pattern(_variable_name(name[:-1] or "_")) + "*"
    return _variable_name(name)


def _environment_lines(policy: EnvPolicy, explicit: Mapping[str, str] | None) -> list[str]:
    lines: list[str] = []
    if policy.inherit != "all":
        keep = {
            "none": "",
            "core": _REMOTE_CORE,
            "listed": "|".join(_listed_pattern(name) for name in policy.listed),
        }[policy.inherit]
        keep_case = f"{keep}) ;; " if keep else ""
        lines.append(
            f'for __v in $(compgen -e); do case "$__v" in {keep_case}*) unset "$__v";; esac; done'
        )
    patterns = "|".join(_case_pattern(p.upper()) for p in policy.exclude)
    if patterns:
        chosen = [n for n in policy.listed if not n.endswith("*")]
        spared = f"{'|'.join(_variable_name(n) for n in chosen)}) ;; " if chosen else ""
        if policy.inherit != "listed":
            spared = ""
        lines.append(
            f'for __v in $(compgen -e); do case "$__v" in {spared}*) case "${{__v^^}}" in '
            f'{patterns}) unset "$__v";; esac;; esac; done'
        )
    for name, value in {**policy.extra, **(explicit or {})}.items():
        lines.append(f"export {_variable_name(name)}={shlex.quote(value)}")
    return lines


def environment_script(policy: EnvPolicy, explicit: Mapping[str, str] | None = None) -> str:
    """Bash that leaves only the variables ``policy`` allows (for the terminal)."""
    return "\n".join(_environment_lines(policy, explicit))


def command_script(
    command: str,
    cwd: str,
    markers: Markers,
    policy: EnvPolicy,
    explicit_env: Mapping[str, str] | None,
    settle: float = 0.25,
    grace: float = 2.0,
) -> str:
    """The wrapper for one command (fed to ``bash -s``)."""
    lines = [
        _ALIVE,
        f"cd -- {shlex.quote(cwd)} 2>/dev/null || "
        f"{{ echo {markers.line('NOCWD')} >&2; exit 126; }}",
        *_environment_lines(policy, explicit_env),
        # Job control gives the background job a process group of its own (pgid =
        # its pid) for a fork, where setsid would cost a fresh bash; it is off again
        # inside the job, so the command's own "&" children stay in the group, and
        # off again in the wrapper before "wait", so bash prints no job notices.
        f"__troupe_command={shlex.quote(command)}",
        "set -m",
        '( set +m; eval "$__troupe_command" ) </dev/null &',
        "__pid=$!",
        "set +m",
        # From here a write to a closed channel fails instead of killing the wrapper
        # (after the fork, so the command keeps the default SIGPIPE): a group report
        # that cannot be written means nobody will ever learn the group, so the
        # wrapper ends it at once; later writes fail harmlessly and the wrapper still
        # ends the leftovers.
        "trap '' PIPE",
        _START_TIME,
        f'printf \'%s %s\\n%s %s\\n\' "{markers.line("PGID")}" "$__pid" '
        f'"{markers.line("START")}" "$__start" >&2 2>/dev/null || {{ '
        + _end_groups("$__pid", 0, grace)
        + "; }",
        'wait "$__pid"; __status=$?',
        f'echo "{markers.line("EXIT")} $__status" >&2',
        _end_groups("$__pid", settle, grace),
        'exit "$__status"',
    ]
    return "\n".join(lines) + "\n"


class RemoteGroup(msgspec.Struct, frozen=True):
    """A process group on a remote host: its id and its leader's start time."""

    pgid: int
    start_time: int | None = None


class LostCall(msgspec.Struct, frozen=True):
    """A call whose group was never reported (its link died between the fork and the
    report reaching us). Its wrapper still carries the call's nonce in its command
    line (the script itself, or an extra argument to ``bash -s``), so the groups are
    found through it: the wrapper's own and those of its children (the command's
    leader among them)."""

    nonce: str

    def __post_init__(self) -> None:
        if not _NONCE.match(self.nonce):
            raise ValueError(f"not a call nonce: {self.nonce!r}")


_NONCE = re.compile(r"[0-9a-f]+\Z")

_WRAPPED = (
    # __troupe_take PID adds PID's process group to $__troupe_groups (never init's,
    # nor this script's own). __troupe_wrapped ERE adds the groups of every process
    # whose command line carries one of the nonces in ERE, and of their children. The
    # pattern keeps grep from finding itself: its own argument has "(" after the prefix.
    '__troupe_pgid() { __pg=; local __s; read -r __s 2>/dev/null < "/proc/$1/stat" || return 1; '
    "__s=${__s##*) }; set -- $__s; __pg=$3; }\n"
    '__troupe_take() { __troupe_pgid "$1" || return 0; case "$__pg" in '
    '""|0|1|"$__troupe_self") ;; *) __troupe_groups="$__troupe_groups $__pg";; esac; }\n'
    "__troupe_wrapped() { local __f __p __k __kids; "
    'for __f in $(grep -lsE -e "__TROUPE_($1)_" /proc/[0-9]*/cmdline); do '
    '__p=${__f#/proc/}; __p=${__p%/cmdline}; [ "$__p" = "$$" ] && continue; '
    '__troupe_take "$__p"; __kids=(); '
    'read -r -a __kids 2>/dev/null < "/proc/$__p/task/$__p/children"; '
    'for __k in "${__kids[@]}"; do __troupe_take "$__k"; done; done; }\n'
    '__troupe_pgid "$$"; __troupe_self=$__pg'
)


def kill_script(
    groups: Iterable[RemoteGroup], grace: float = 2.0, calls: Iterable[LostCall] = ()
) -> str:
    """End the given groups together (timeout, abort, shutdown, or orphans of a lost
    link): TERM, ``grace`` seconds, KILL, then wait until they are gone. A group whose
    leader pid now names another process (checked by start time) is left alone. The
    groups of ``calls`` are found through their wrappers (see :class:`LostCall`)."""
    checks = " ".join(
        f"{int(g.pgid)}:{int(g.start_time) if g.start_time is not None else ''}" for g in groups
    )
    nonces = "|".join(sorted({c.nonce for c in calls if _NONCE.match(c.nonce)}))
    lines = [
        _ALIVE,
        _SAME_PROCESS,
        "__troupe_groups=",
        f'for __e in {checks}; do __troupe_same "${{__e%%:*}}" "${{__e#*:}}" && '
        '__troupe_groups="$__troupe_groups ${__e%%:*}"; done',
        *([_WRAPPED, f"__troupe_wrapped '{nonces}'"] if nonces else []),
        _end_groups("$__troupe_groups", 0, grace),
    ]
    return "\n".join(lines) + "\n"


def find_files_command(root: str, skipped: frozenset[str]) -> str:
    """List regular files under ``root`` as ``mtime<TAB>path`` lines (GNU find)."""
    prune = " -o ".join(f"-name {shlex.quote(name)}" for name in sorted(skipped))
    return f"find {shlex.quote(root)} \\( {prune} \\) -prune -o -type f -printf '%T@\\t%p\\n'"


def grep_command(pattern: str, root: str, glob_filter: str | None, case_insensitive: bool) -> str:
    """ripgrep when the host has it, GNU grep otherwise; ``path:line:text`` output."""
    rg = ["rg", "--line-number", "--no-heading", "--with-filename", "--color=never"]
    grep = ["grep", "-rn", "-E", "--binary-files=without-match"]
    if case_insensitive:
        rg.append("--ignore-case")
        grep.append("-i")
    if glob_filter:
        rg += ["--glob", glob_filter]
        grep.append(f"--include={glob_filter}")
    grep += ["--exclude-dir=.git"]
    rg += ["--regexp", pattern, "--", root]
    grep += ["-e", pattern, "--", root]
    return f"if command -v rg >/dev/null 2>&1; then {shlex.join(rg)}; else {shlex.join(grep)}; fi"
