"""The policy's side of the OS sandbox: which paths a sandboxed command may write,
which it must not see, and whether it has the network.

The environment does the confining (:mod:`environments.sandbox`, bubblewrap);
this module only turns a :class:`Policy` into the :class:`Sandbox` request field.
"""

from __future__ import annotations

import posixpath

from actors.policy.engine import Policy
from environments.sandbox import bwrap_argv, find_bwrap
from protocol.environment import Sandbox

__all__ = ["Sandbox", "bwrap_argv", "find_bwrap", "sandbox_for"]

VISIBLE_ANYWAY = frozenset({"/etc/passwd"})
"""Denied to the file tools but left visible inside the sandbox: user lookups
(``id``, ``git``, ``ssh``) read it, and it holds no secret where shadow passwords
are used."""


def sandbox_for(policy: Policy, root: str) -> Sandbox | None:
    """The sandbox a command of this policy runs in, or None when it is off.

    Writable: the policy's allowed paths (relative ones from ``root``, ``~`` left
    for the environment's host to expand). Hidden: its denied paths. ``auto`` asks
    for the sandbox where it can be had; ``on`` refuses commands where it cannot.
    """
    if policy.sandbox == "off":
        return None
    writable = tuple(
        path if path.startswith(("/", "~")) else posixpath.normpath(posixpath.join(root, path))
        for path in policy.allowed_paths
    )
    hidden = tuple(path for path in policy.denied_paths if path not in VISIBLE_ANYWAY)
    return Sandbox(
        writable=writable, hidden=hidden, network=policy.network, required=policy.sandbox == "on"
    )
