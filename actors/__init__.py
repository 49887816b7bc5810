"""Troupe's actors: the kernel, and on top of it the model gateways, tools, sessions,
subagents, the event store, the WebSocket gateway and the CLI.

The kernel's names (``Actor``, ``ActorRef``, ``Runtime``, ``handler``) are
importable from here. They are imported on first use, so ``import actors`` stays
cheap: the ``troupe`` command starts (and handles Ctrl-C as one line) before trio
is loaded.
"""

from __future__ import annotations

# The one place the version is written: pyproject reads it from here at build time
# (setuptools' ``attr:``, parsed without importing), and ``troupe --version`` reads
# it as an attribute, not through ``importlib.metadata`` (33 ms on every ask).
__version__ = "0.1.0"

TYPE_CHECKING = False  # not typing's: importing typing here would be a window for Ctrl-C
if TYPE_CHECKING:
    from typing import Any

    from actors.kernel import Actor, ActorRef, Runtime, handler

_KERNEL = ("Actor", "ActorRef", "Runtime", "handler")


def __getattr__(name: str) -> Any:
    if name not in _KERNEL:
        raise AttributeError(f"module 'actors' has no attribute {name!r}")
    from actors import kernel

    return getattr(kernel, name)


__all__ = ["Actor", "ActorRef", "Runtime", "__version__", "handler"]
