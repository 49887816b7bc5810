"""``troupe config``: the effective settings and where each one came from.

Reads the same sources as ``troupe run`` (flags, ``.troupe/config.toml`` in the
project, ``~/.config/troupe/config.toml``, the environment), so giving it run's
flags shows what a run with them would use. The API key itself is never printed.
It also says whether commands will run in the OS sandbox on this machine, and why
(the setting from the policy and ``--sandbox``, then what bwrap does here).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.commands.run import settings_for
from actors.config import user_config_path
from actors.policy.engine import Policy
from actors.policy.presets import InvalidPolicy, UnknownPreset, resolve_policy
from actors.policy.sandbox import network_allowed
from environments.sandbox import find_bwrap, probe_local_now


def sandbox_state(policy: Policy, source: str) -> dict[str, str]:
    """The policy's sandbox setting (from ``source``), what it comes to on this
    machine, and why."""
    setting = policy.sandbox
    network = "on" if network_allowed(policy) else "off (loopback only)"
    if setting == "off":
        reason = f"{source}: commands run unconfined and are only classified"
        return {"setting": "off", "effective": "off", "network": "-", "reason": reason}
    state = probe_local_now(find_bwrap())
    if state.available:
        effective, reason = "on", state.reason
    elif setting == "on":
        effective, reason = "refused", f"{state.reason}; every command is refused"
    else:
        effective, reason = "off", f"{state.reason}; commands are only classified"
    return {"setting": setting, "effective": effective, "network": network, "reason": reason}


def sandbox_line(shown: dict[str, str]) -> str:
    """``auto -> on (bwrap works)``, ``auto -> off: bwrap not found; ...``."""
    if shown["setting"] == "off":
        return f"off, set by {shown['reason']}"
    arrow = f"{shown['setting']} -> {shown['effective']}"
    if shown["effective"] == "on":
        return f"{arrow} ({shown['reason']}); network {shown['network']}"
    return f"{arrow}: {shown['reason']}"


def _policy(args: argparse.Namespace) -> Policy:
    overrides = {"sandbox": args.sandbox} if getattr(args, "sandbox", None) else None
    try:
        return resolve_policy(getattr(args, "policy", None) or "interactive", overrides)
    except (UnknownPreset, InvalidPolicy) as error:
        raise CommandError(f"--policy: {error}", EXIT_BAD_INPUT) from None


def run(args: argparse.Namespace) -> int:
    workdir = Path(args.workdir or ".").resolve()
    settings = settings_for(args, workdir)
    from actors.commands.telemetry_host import telemetry_line  # its own line, docs/telemetry.md

    telemetry = telemetry_line(settings)
    key = settings.api_key
    key_text = f"set ({key.source})" if key.value else "not set"
    policy = _policy(args)
    source = "--sandbox" if getattr(args, "sandbox", None) else f"policy {policy.name}"
    sandbox = sandbox_state(policy, source)
    if args.json:
        out = {name: {"value": s.value, "source": s.source} for name, s in settings.values.items()}
        out["api_key"] = {"value": bool(key.value), "source": key.source}
        print(json.dumps({
            "settings": out,
            "ssh_hosts": {name: host.target for name, host in settings.ssh_hosts.items()},
            "telemetry": telemetry,
            "files": settings.files,
            "policy": policy.name,
            "sandbox": sandbox,
        }))  # fmt: skip
        return 0
    rows = [(name, _show(s.value), s.source) for name, s in settings.values.items()]
    rows.append(("api_key", key_text, ""))
    width = max(len(_show(value)) for _, value, _ in rows)
    for name, value, source in rows:
        print(f"{name:<17} {value:<{width}}  {source}".rstrip())
    for name, host in settings.ssh_hosts.items():
        print(f"ssh_hosts.{name:<7} {host.target}")
    print(f"{'telemetry':<17} {telemetry}")
    print(f"{'policy':<17} {policy.name}")
    print(f"{'sandbox':<17} {sandbox_line(sandbox)}")
    files = settings.files or [f"none (looked for {user_config_path()} and .troupe/config.toml)"]
    print("config files: " + ", ".join(files))
    return 0


def _show(value: object) -> str:
    if value is None:
        return "-"
    text = str(value).replace("\n", " ")
    return text if len(text) <= 48 else text[:47] + "…"
