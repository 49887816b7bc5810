"""The policy's side of the OS sandbox: which paths a sandboxed command may write,
which stay read-only inside them, which it must not see, and whether it has the
network.

The environment does the confining (:mod:`environments.sandbox`, bubblewrap, on
its own host, where ``~`` is expanded); this module only turns a :class:`Policy`
into the :class:`Sandbox` request field.
"""

from __future__ import annotations

import posixpath

from actors.policy.engine import Policy
from environments.sandbox import bwrap_argv, find_bwrap
from protocol.environment import Sandbox

__all__ = ["Sandbox", "bwrap_argv", "find_bwrap", "network_allowed", "sandbox_for"]

VISIBLE_ANYWAY = frozenset({"/etc/passwd"})
"""Denied to the file tools but left visible inside the sandbox: user lookups
(``id``, ``git``, ``ssh``) read it, and it holds no secret where shadow passwords
are used."""


def _from_root(path: str, root: str) -> str:
    if path.startswith(("/", "~")):
        return path
    return posixpath.normpath(posixpath.join(root, path))


def network_allowed(policy: Policy) -> bool:
    return policy.network is True or policy.network == "on"


def sandbox_for(policy: Policy, root: str) -> Sandbox | None:
    """The sandbox a command of this policy runs in, or None when it is off.

    Writable: the policy's allowed paths (relative ones from ``root``, ``~`` left
    for the environment's host to expand), with its protected paths read-only
    inside them. Hidden: its denied paths. ``auto`` asks for the sandbox where it
    can be had; ``on`` refuses commands where it cannot.
    """
    if policy.sandbox == "off":
        return None
    return Sandbox(
        writable=tuple(_from_root(path, root) for path in policy.allowed_paths),
        protected=tuple(_from_root(path, root) for path in policy.protected_paths),
        hidden=tuple(path for path in policy.denied_paths if path not in VISIBLE_ANYWAY),
        network=network_allowed(policy),
        required=policy.sandbox == "on",
    )
