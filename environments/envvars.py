"""Which environment variables a command inherits (coding-agent-loop-spec §4.2).

Secrets stay out of the model's reach by default: a session's commands get only an
allowlist of variables (the policy's ``env``), and whatever the policy, any variable
whose name looks like a secret (it holds SECRET, PASSWORD, PASSWD, TOKEN, API_KEY,
APIKEY, CREDENTIAL, ACCESS_KEY or PRIVATE_KEY, in any case: ``AWS_SECRET_ACCESS_KEY``,
``PGPASSWORD``, ``GITHUB_TOKEN``) is dropped, unless its exact name is listed.
Variables passed explicitly with a call are always set.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Mapping
from typing import Literal

import msgspec

EnvPolicyName = Literal["all", "core", "none", "listed"]

SENSITIVE_PATTERNS = ("*SECRET*", "*PASSWORD*", "*PASSWD*", "*TOKEN*", "*API_KEY*", "*APIKEY*",
                      "*CREDENTIAL*", "*ACCESS_KEY*", "*PRIVATE_KEY*")  # fmt: skip

CORE_VARIABLES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TMPDIR",
        "TZ",
        "GOPATH",
        "GOROOT",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "NVM_DIR",
        "NODE_PATH",
        "PYENV_ROOT",
        "VIRTUAL_ENV",
        "JAVA_HOME",
        "GEM_HOME",
    }
)
_CORE_PREFIXES = ("LC_",)


class EnvPolicy(msgspec.Struct, frozen=True):
    """``inherit``: all variables, the core set, none, or only the ``listed`` ones;
    then the exclusions; then ``extra`` (set by whoever configures the environment)."""

    inherit: EnvPolicyName = "all"
    exclude: tuple[str, ...] = SENSITIVE_PATTERNS
    extra: dict[str, str] = msgspec.field(default_factory=dict)
    listed: tuple[str, ...] = ()
    """The names kept when ``inherit`` is ``listed`` (the policy's allowlist mode);
    a name ending in ``*`` keeps every variable it starts (``LC_*``). An exact name
    listed here is kept even if it looks like a secret: someone chose it."""


def restricted_to(policy: EnvPolicy, names: tuple[str, ...] | None) -> EnvPolicy:
    """``policy`` narrowed to an allowlist a command asks for (None: unchanged)."""
    if names is None:
        return policy
    return msgspec.structs.replace(policy, inherit="listed", listed=names)


def _excluded(name: str, patterns: tuple[str, ...]) -> bool:
    upper = name.upper()
    return any(_matcher(pattern.upper())(upper) for pattern in patterns)


@functools.cache
def _matcher(pattern: str) -> Callable[[str], bool]:
    """``fnmatchcase`` against ``pattern``, as a substring, prefix, suffix or equality
    test when its only wildcards are a leading or trailing ``*`` (the sensitive
    patterns all are): every command's environment tests each variable against
    each pattern, and the glob's regular expressions were most of a command's
    start in this module (issue 36)."""
    core = pattern.strip("*")
    if "*" in core or "?" in core or "[" in core:
        return lambda name: fnmatch.fnmatchcase(name, pattern)
    leading, trailing = pattern.startswith("*"), pattern.endswith("*")
    if leading and trailing:
        return lambda name: core in name
    if leading:
        return lambda name: name.endswith(core)
    if trailing:
        return lambda name: name.startswith(core)
    return lambda name: name == core


def _listed(name: str, listed: tuple[str, ...]) -> bool:
    return any(
        name.startswith(entry[:-1]) if entry.endswith("*") else name == entry for entry in listed
    )


def _is_core(name: str) -> bool:
    return name in CORE_VARIABLES or name.startswith(_CORE_PREFIXES)


def command_environment(
    policy: EnvPolicy,
    inherited: Mapping[str, str],
    explicit: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables a command runs with."""
    if policy.inherit == "none":
        chosen: dict[str, str] = {}
    elif policy.inherit == "listed":
        chosen = {k: v for k, v in inherited.items() if _listed(k, policy.listed)}
    elif policy.inherit == "core":
        chosen = {k: v for k, v in inherited.items() if _is_core(k)}
    else:
        chosen = dict(inherited)
    chosen = {
        k: v
        for k, v in chosen.items()
        if not _excluded(k, policy.exclude) or (policy.inherit == "listed" and k in policy.listed)
    }
    chosen.update(policy.extra)
    if explicit:
        chosen.update(explicit)
    return chosen
