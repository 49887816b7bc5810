"""Git as Troupe itself runs it: no code from the repository.

A repository's own configuration can name programs that git runs on its own:
``core.fsmonitor`` on every ``git status``, hooks, ``diff.external``, a pager,
textconv drivers. A cloned or planted repository would run them the moment Troupe
looks at it (the system prompt's git probe), before the model or the user did
anything. Every git command Troupe runs for itself is built here, so one list of
overrides covers them all; commands the model runs are the policy's business.
"""

from __future__ import annotations

import shlex

SAFE_GIT_OPTIONS = (
    "--no-pager",
    "-c", "core.fsmonitor=",
    "-c", "core.hooksPath=/dev/null",
    "-c", "diff.external=",
    "-c", "core.pager=cat",
    "-c", "pager.status=false",
    "-c", "pager.log=false",
    "-c", "pager.diff=false",
    "-c", "core.sshCommand=false",
    "-c", "core.askPass=false",
    "-c", "credential.helper=",
    "-c", "protocol.ext.allow=never",
)  # fmt: skip
"""Global options placed before every subcommand: the repository's programs off."""

SAFE_GIT_ENV = {
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EXTERNAL_DIFF": "",
}
"""Variables for a git Troupe runs: no pager, no prompt, no index rewrite by a probe."""


def safe_git_argv(*args: str) -> list[str]:
    """``git <args>`` as an argument vector with the repository's programs off;
    diff-like subcommands also get ``--no-textconv --no-ext-diff``."""
    argv = ["git", *SAFE_GIT_OPTIONS, *args]
    if args and args[0] in ("diff", "show", "log") and "--no-textconv" not in args:
        argv[len(SAFE_GIT_OPTIONS) + 2 : len(SAFE_GIT_OPTIONS) + 2] = [
            "--no-textconv",
            "--no-ext-diff",
        ]
    return argv


def safe_git_shell(*args: str) -> str:
    """The same command as a shell line (for probes that run through ``bash -c``),
    its variables set in front of it."""
    env = " ".join(f"{name}={shlex.quote(value)}" for name, value in SAFE_GIT_ENV.items())
    return f"{env} {shlex.join(safe_git_argv(*args))}"
