"""Moved to :mod:`environments.shell.markers` (shared by every kind that runs commands
through a shell); this name is kept for one release."""

from typing import Any

from environments.shell import markers as _moved


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
