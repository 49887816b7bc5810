"""``python3`` without pyenv's shim in front of it (tests/conftest.py calls this).

On this machine PATH starts with pyenv's shims: ``python3`` there is a bash script
that asks ``pyenv`` which version is chosen and then runs it, a few forks and about
0.1 s of CPU a call before Python starts. The tests' commands, hooks and skills run
``python3`` many times. For the run, the directory of the interpreter the shim
picks goes first on PATH instead: the same program, without the dispatch. Where
``python3`` is no shim, nothing changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import MutableMapping
from pathlib import Path

SHIMS = f"{os.sep}shims{os.sep}"


def is_shim(path: str | None) -> bool:
    return path is not None and SHIMS in path


def bypass_python3_shim(environ: MutableMapping[str, str] = os.environ) -> Path | None:
    """Puts the directory of the interpreter ``python3`` resolves to first on
    ``environ["PATH"]`` when ``python3`` on it is a shim; returns that directory."""
    found = shutil.which("python3", path=environ.get("PATH"))
    if found is None or not is_shim(found):
        return None
    try:
        done = subprocess.run(
            [found, "-c", "import sys; print(sys.executable)"],
            capture_output=True, text=True, timeout=60, check=True, env=dict(environ),
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # the shim alone then: slower, never wrong
    real = Path(done.stdout.strip())
    if not real.is_absolute() or not real.is_file() or is_shim(str(real)):
        return None
    environ["PATH"] = f"{real.parent}{os.pathsep}{environ.get('PATH', '')}"
    return real.parent
