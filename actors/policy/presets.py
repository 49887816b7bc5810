"""Policy presets: each seed's stance as data, selectable by name.

Every preset runs commands in the OS sandbox where it works (``sandbox = "auto"``:
workspace writable, the rest read-only, secrets hidden, no network, variables from
an allowlist), except where it says otherwise.

- ``interactive`` (the default): read and write run, admin asks.
- ``agent-loop-and-tool-system``: the seed's blocklist on top of the categories,
  commands get only allowlisted environment variables, file tools (reads too)
  stay in the allowed paths.
- ``agentic-behavior-tool``: the seed's list of commands that need approval.
- ``adr-040``: commands confined to the repository.
- ``unattended``: no one to ask; admin denied, writes only where listed.
- ``sandboxed``: interactive, and commands are refused where the sandbox cannot be
  had (``sandbox = "on"``).
- ``permissive``: trusted automation; everything runs, without the sandbox
  (``sandbox = "off"``, shown in ``troupe config``); credentials stay denied to the
  file tools and secret-looking variables are still dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import msgspec

from actors.policy.engine import Policy

SEED_BLOCKLIST = ("rm", "sudo", "shutdown", "reboot", "mkfs*", "dd", "chmod 777")
DISKS = ("sd*", "hd*", "vd*", "xvd*", "nvme*", "mmcblk*", "disk*", "dm-*", "md*", "loop*")
CATASTROPHIC = (
    "rm -r /", "rm -r /*", "rm -r ~", "rm -r ~/*", "mkfs*", "wipefs", "shutdown", "reboot",
    "halt", "poweroff", "systemctl poweroff", "systemctl reboot", "systemctl halt",
    "init 0", "init 6", "chmod -R 777 /",
    *(f"dd of=/dev/{disk}" for disk in DISKS), ":(){ :|:& };:",
)  # fmt: skip
"""Refused whatever the category: what destroys the machine or the user's home.
``dd`` to a disk is refused; ``dd`` elsewhere is asked (it is ``admin``)."""
APPROVAL_COMMANDS = ("rm -r", "rm -rf", "sudo", "su", "curl", "wget", "scp", "rsync",
                     "chmod 777", "mkfs*", "dd")  # fmt: skip

POLICY_PRESETS = MappingProxyType(
    {
        "interactive": Policy(name="interactive", blocklist=CATASTROPHIC),
        "agent-loop-and-tool-system": Policy(
            name="agent-loop-and-tool-system",
            blocklist=SEED_BLOCKLIST,
            env="allowlist",
            confine_reads=True,
        ),
        "agentic-behavior-tool": Policy(
            name="agentic-behavior-tool", blocklist=CATASTROPHIC, ask_commands=APPROVAL_COMMANDS
        ),
        "adr-040": Policy(name="adr-040", blocklist=CATASTROPHIC, confine_commands=True),
        "unattended": Policy(
            name="unattended", mode="unattended", write="deny", admin="deny", blocklist=CATASTROPHIC
        ),
        "sandboxed": Policy(name="sandboxed", blocklist=CATASTROPHIC, sandbox="on", network=False),
        "permissive": Policy(
            name="permissive",
            admin="allow",
            allowed_paths=("/",),
            sandbox="off",
            network=True,
            env="deny_secrets",
        ),
    }
)


class UnknownPreset(ValueError):
    """A preset name that does not exist; the message lists the ones that do."""


def policy_preset(name: str) -> Policy:
    try:
        return POLICY_PRESETS[name]
    except KeyError:
        known = ", ".join(POLICY_PRESETS)
        raise UnknownPreset(f"unknown policy preset {name!r} (known: {known})") from None


class InvalidPolicy(ValueError):
    """Overrides that do not fit the policy's fields; the message says which."""


def resolve_policy(name: str, overrides: Mapping[str, Any] | None = None) -> Policy:
    """A session's policy: the preset ``name`` with ``overrides`` laid over it."""
    preset = policy_preset(name)
    if not overrides:
        return preset
    fields = msgspec.to_builtins(preset)
    fields.update(overrides)
    try:
        return msgspec.convert(fields, Policy)
    except msgspec.ValidationError as exc:
        raise InvalidPolicy(f"policy overrides: {exc}") from None
