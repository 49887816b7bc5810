"""Environment kinds as data: one tagged union of what an environment is made from.

An environment added over the wire (``add_environment``), from the config file or
by an embedder is a name and one of these specs; the ``kind`` tag picks the
environment kind that starts it (the server's registry of kinds,
:mod:`environments.kinds`). The store keeps ``(name, kind, spec)`` so added
environments come back when the server starts again. A spec holds no secret: paths
and names only (an SSH key's passphrase is never stored).

Adding a kind adds one spec here (a frozen struct tagged with the kind's name) and
one entry to :data:`AnyEnvironmentSpec`; see docs/environment-kinds.md.
"""

from __future__ import annotations

import msgspec


class EnvironmentSpec(msgspec.Struct, frozen=True, tag_field="kind"):
    """Base of every kind's spec; the subclass's tag is the kind's name."""


class LocalSpec(EnvironmentSpec, frozen=True, tag="local"):
    """A directory of the server's machine (commands under its OS sandbox when the
    session's policy asks for one)."""

    working_dir: str


class SSHSpec(EnvironmentSpec, frozen=True, tag="ssh"):
    """A host at ``ssh://user@host:port`` or a ``~/.ssh/config`` alias. Empty
    ``known_hosts``/``client_keys``/``config_files`` mean the user's defaults;
    ``working_dir`` defaults to the login's home directory."""

    target: str
    working_dir: str | None = None
    known_hosts: str | None = None
    client_keys: list[str] = msgspec.field(default_factory=list[str])
    config_files: list[str] = msgspec.field(default_factory=list[str])
    channels_per_connection: int = 8


class DockerSpec(EnvironmentSpec, frozen=True, tag="docker"):
    """A container of ``image`` (created on first use, removed when the environment
    stops) with ``workspace``, a directory of the server's machine, bind-mounted at
    the same path (or copied in: ``copy_workspace``). No network unless ``network``
    names one; ``docker_host`` is the daemon (default ``DOCKER_HOST``, else the
    standard socket)."""

    image: str
    workspace: str
    copy_workspace: bool = False
    user: str | None = None
    cpus: float | None = None
    memory_bytes: int | None = None
    pids_limit: int | None = 1024
    network: str = "none"
    docker_host: str | None = None


AnyEnvironmentSpec = LocalSpec | SSHSpec | DockerSpec
"""Every kind the wire knows; ``kind`` says which."""

__all__ = ["AnyEnvironmentSpec", "DockerSpec", "EnvironmentSpec", "LocalSpec", "SSHSpec"]
