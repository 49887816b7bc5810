"""The bash the SSH environment runs on the remote side, built as plain strings.

Every remote command is a small wrapper fed to ``bash -s`` on stdin (so the login
shell may be anything and the command's size is not bounded by ARG_MAX). The
wrapper starts the command as the leader of its own process group,
reports the group id and, when the leader exits, the exit status on stderr behind a
per-call nonce, and then ends whatever is left of the group (SIGTERM, 2 s, SIGKILL)
so that a background grandchild cannot hold the channel open. Killing by group from
a second channel works for root and non-root logins alike, where sshd's signal
requests do not (OpenSSH before 10.0 refuses them for root).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

import msgspec

from environments.envvars import EnvPolicy

_ALIVE = (
    # kill -0 fails at once when the group has no member (the usual case after the
    # leader was reaped); only then is ps asked whether the members are zombies.
    '__troupe_alive() { kill -0 -- "-$1" 2>/dev/null || return 1; '
    "command -v ps >/dev/null 2>&1 || return 0; "
    "ps -eo pgid=,stat= | awk -v g=\"$1\" '$1==g && $2 !~ /^Z/ {f=1} END {exit !f}'; }"
)


_REMOTE_CORE = "PATH|HOME|USER|LOGNAME|SHELL|LANG|TERM|TMPDIR|LC_*"
"""Variables a remote command keeps under the "core" policy (a bash case pattern)."""


def _end_group(pgid: str, settle: float) -> str:
    """Bash that ends group ``pgid`` if anything of it is alive: TERM, 2 s, KILL."""
    return (
        f"if __troupe_alive {pgid}; then sleep {settle}; "
        f'kill -TERM -- "-{pgid}" 2>/dev/null; '
        f"for __i in $(seq 20); do __troupe_alive {pgid} || break; sleep 0.1; done; "
        f'kill -KILL -- "-{pgid}" 2>/dev/null; fi'
    )


class Markers(msgspec.Struct, frozen=True):
    """The marker lines of one call; the nonce keeps a command from forging them."""

    nonce: str

    @property
    def prefix(self) -> bytes:
        return f"__TROUPE_{self.nonce}_".encode()

    def line(self, kind: str) -> str:
        return f"__TROUPE_{self.nonce}_{kind}__"


def _environment_lines(policy: EnvPolicy, explicit: Mapping[str, str] | None) -> list[str]:
    lines: list[str] = []
    if policy.inherit != "all":
        keep = (
            "" if policy.inherit == "none" else "PATH|HOME|USER|LOGNAME|SHELL|LANG|TERM|TMPDIR|LC_*"
        )
        keep_case = f"{keep}) ;; " if keep else ""
        lines.append(
            f'for __v in $(compgen -e); do case "$__v" in {keep_case}*) unset "$__v";; esac; done'
        )
    patterns = "|".join(p.upper() for p in policy.exclude)
    if patterns:
        lines.append(
            'for __v in $(compgen -e); do case "${__v^^}" in '
            f'{patterns}) unset "$__v";; esac; done'
        )
    for name, value in {**policy.extra, **(explicit or {})}.items():
        lines.append(f"export {name}={shlex.quote(value)}")
    return lines


def command_script(
    command: str,
    cwd: str,
    markers: Markers,
    policy: EnvPolicy,
    explicit_env: Mapping[str, str] | None,
    settle: float = 0.25,
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
        f'echo "{markers.line("PGID")} $__pid" >&2',
        'wait "$__pid"; __status=$?',
        f'echo "{markers.line("EXIT")} $__status" >&2',
        _end_group("$__pid", settle),
        'exit "$__status"',
    ]
    return "\n".join(lines) + "\n"


def kill_script(pgids: list[int]) -> str:
    """End the given process groups now (timeout, abort, or orphans of a lost link)."""
    lines = [_ALIVE]
    lines += [_end_group(str(pgid), 0) for pgid in pgids]
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
