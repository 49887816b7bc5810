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
from actors.commands.settings_flags import settings_for
from actors.config import user_config_path
from actors.config.trust import is_trusted
from actors.hooks.config import Hook
from actors.hooks.sources import load_hooks_local
from actors.policy.engine import Policy
from actors.policy.presets import InvalidPolicy, UnknownPreset, resolve_policy
from actors.policy.sandbox import network_allowed
from actors.skills.catalog import discover_local
from actors.skills.commands import discover_commands_local
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
    skills, _ = discover_local(workdir)
    user_hooks, project_hooks, _ = load_hooks_local(workdir)
    trusted = is_trusted(workdir)
    all_hooks = [(h, h.user or trusted) for h in (*user_hooks.hooks, *project_hooks.hooks)]
    commands, _ = discover_commands_local(workdir)
    if args.json:
        out = {name: {"value": _shown(name, s.value), "source": s.source}
               for name, s in settings.values.items()}  # fmt: skip
        out["api_key"] = {"value": bool(key.value), "source": key.source}
        print(json.dumps({
            "settings": out,
            "ssh_hosts": {name: host.target for name, host in settings.ssh_hosts.items()},
            "telemetry": telemetry,
            "files": settings.files,
            "policy": policy.name,
            "sandbox": sandbox,
            "hooks": [_hook_row(hook, runs) for hook, runs in all_hooks],
            "skills": [{"name": k.name, "description": k.description, "scope": k.scope,
                        "path": k.path} for k in skills.skills],
            "commands": [{"name": c.name, "description": c.description, "scope": c.scope,
                          "path": c.path} for c in commands.commands],
        }))  # fmt: skip
        return 0
    rows = [(name, _show(_shown(name, s.value)), s.source) for name, s in settings.values.items()]
    rows.append(("api_key", key_text, ""))
    width = max(len(_show(value)) for _, value, _ in rows)
    for name, value, source in rows:
        print(f"{name:<17} {value:<{width}}  {source}".rstrip())
    for name, host in settings.ssh_hosts.items():
        print(f"ssh_hosts.{name:<7} {host.target}")
    print(f"{'telemetry':<17} {telemetry}")
    print(f"{'policy':<17} {policy.name}")
    print(f"{'sandbox':<17} {sandbox_line(sandbox)}")
    for hook, runs in all_hooks:
        state = "" if runs else " (ignored until trusted)"
        matcher = f" [{hook.matcher}]" if hook.matcher else ""
        print(f"{'hook ' + hook.event:<17} {_show(hook.command)}{matcher}  "
              f"{hook.source}{state}")  # fmt: skip
    for skill in skills.skills:
        print(f"{'skill ' + skill.name:<17} {_show(skill.description)}  {skill.path}")
    for command in commands.commands:
        print(f"{'command /' + command.name:<17} {_show(command.description)}  {command.path}")
    files = settings.files or [f"none (looked for {user_config_path()} and .troupe/config.toml)"]
    print("config files: " + ", ".join(files))
    return 0


def _hook_row(hook: Hook, runs: bool) -> dict[str, object]:
    return {"event": hook.event, "matcher": hook.matcher, "command": hook.command,
            "source": hook.source, "runs": runs}  # fmt: skip


def _shown(name: str, value: object) -> object:
    """A setting as it may be printed: the store's URL without its password."""
    if name == "store" and isinstance(value, str):
        from actors.store.setting import redact

        return redact(value)
    return value


def _show(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):  # as the config file spells it
        return "true" if value else "false"
    text = str(value).replace("\n", " ")
    return text if len(text) <= 48 else text[:47] + "…"
