"""``troupe config``: the effective settings and where each one came from.

Reads the same sources as ``troupe run`` (flags, ``.troupe/config.toml`` in the
project, ``~/.config/troupe/config.toml``, the environment), so giving it run's
flags shows what a run with them would use. The API key itself is never printed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from actors.commands.run import settings_for
from actors.config import user_config_path


def run(args: argparse.Namespace) -> int:
    workdir = Path(args.workdir or ".").resolve()
    settings = settings_for(args, workdir)
    key = settings.api_key
    key_text = f"set ({key.source})" if key.value else "not set"
    if args.json:
        out = {name: {"value": s.value, "source": s.source} for name, s in settings.values.items()}
        out["api_key"] = {"value": bool(key.value), "source": key.source}
        print(json.dumps({
            "settings": out,
            "ssh_hosts": {name: host.target for name, host in settings.ssh_hosts.items()},
            "files": settings.files,
        }))  # fmt: skip
        return 0
    rows = [(name, _show(s.value), s.source) for name, s in settings.values.items()]
    rows.append(("api_key", key_text, ""))
    width = max(len(_show(value)) for _, value, _ in rows)
    for name, value, source in rows:
        print(f"{name:<17} {value:<{width}}  {source}".rstrip())
    for name, host in settings.ssh_hosts.items():
        print(f"ssh_hosts.{name:<7} {host.target}")
    files = settings.files or [f"none (looked for {user_config_path()} and .troupe/config.toml)"]
    print("config files: " + ", ".join(files))
    return 0


def _show(value: object) -> str:
    if value is None:
        return "-"
    text = str(value).replace("\n", " ")
    return text if len(text) <= 48 else text[:47] + "…"
