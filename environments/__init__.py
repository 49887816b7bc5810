"""Execution environments as actors: this machine, remote hosts over SSH, and
Docker containers.

Imports ``protocol`` and ``actors.kernel`` only, never sessions or tools.

``LocalEnvironment``, ``DockerEnvironment`` and ``SSHBridge`` (the actor that adds SSH hosts, see
``AddSSHHost``) are importable from here; they are imported on first use, so
``import environments`` does not load asyncssh.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from environments.docker.environment import DockerEnvironment
    from environments.local import LocalEnvironment
    from environments.ssh.bridge import SSHBridge
    from protocol.environment import AddSSHHost

_WHERE = {
    "DockerEnvironment": "environments.docker.environment",
    "LocalEnvironment": "environments.local",
    "SSHBridge": "environments.ssh.bridge",
    "AddSSHHost": "protocol.environment",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'environments' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = ["AddSSHHost", "DockerEnvironment", "LocalEnvironment", "SSHBridge"]
