"""Where Troupe keeps its own credentials on this machine, as the host knows them.

``actors/policy/paths.py`` denies ``~/.config/troupe`` and ``~/.local/share/troupe``
to every session by default. A data directory moved elsewhere (``--data-dir``,
``$TROUPE_DATA_DIR``, ``$XDG_DATA_HOME``) or a config moved elsewhere
(``$XDG_CONFIG_HOME``, ``$TROUPE_CONFIG``) is known only to the host that creates
sessions; it adds these real locations to each session's denied paths, so the
server token, ``server.json``, the store, the trust list and the user's tool
declarations stay out of the model's reach (the file tools refuse them, the
sandbox hides them).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from actors.config.files import user_config_path
from actors.store import default_data_dir


def own_paths(data_dir: Path, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The data directory in use, the default one, and the user's config directory
    and file, resolved (symlinks followed: the sandbox and the file tools judge
    real paths)."""
    env = dict(os.environ if environ is None else environ)
    config_file = user_config_path(env)
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    found = [data_dir, default_data_dir(env), Path(base).expanduser() / "troupe", config_file]
    paths: list[str] = []
    for path in found:
        real = os.path.realpath(path.expanduser())
        if real not in paths and real != "/":
            paths.append(real)
    return tuple(paths)
