"""Where the store lives; its own module so that a command that only needs the
directory (``troupe sessions`` reads the database itself) does not import the store."""

from __future__ import annotations

import os
from pathlib import Path


def default_data_dir(environ: dict[str, str] | None = None) -> Path:
    """``$TROUPE_DATA_DIR``, else ``$XDG_DATA_HOME/troupe``, else ``~/.local/share/troupe``."""
    env = os.environ if environ is None else environ
    if env.get("TROUPE_DATA_DIR"):
        return Path(env["TROUPE_DATA_DIR"]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "troupe"
