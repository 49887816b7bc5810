"""Trusted projects: which directories' ``.troupe/`` settings may run code or send
credentials.

A repository is content someone else wrote. Its ``.troupe/config.toml`` could name
an MCP server command (run at the next session), a ``base_url`` (the next run sends
the API key there), another server to connect to, SSH hosts; its
``.troupe/tools.yaml`` declares programs the model may call. Those settings take
effect only once the user has trusted the directory (``troupe trust DIR``); until
then they are ignored and one line says so. The list lives in the user's config
directory (``$XDG_CONFIG_HOME/troupe/trusted-projects.json``), never in a project,
and holds resolved absolute paths: a directory is trusted exactly, not its
subdirectories. For an SSH session the path names the directory on that host.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

TRUST_FILE = "trusted-projects.json"
PROJECT_DIR = ".troupe"


class TrustError(ValueError):
    """The trust list cannot be read or written."""


class TrustList(msgspec.Struct, frozen=True):
    directories: list[str] = []


def trust_file(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/troupe/trusted-projects.json`` (``~/.config`` by default):
    the user's config directory, which sessions' tools cannot read or write."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "troupe" / TRUST_FILE


def project_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding ``.troupe/``, else ``start``
    (what ``troupe trust`` run in a subdirectory means)."""
    start = Path(os.path.realpath(start))
    for directory in (start, *start.parents):
        if (directory / PROJECT_DIR).is_dir():
            return directory
    return start


def trusted_directories(environ: Mapping[str, str] | None = None) -> list[str]:
    path = trust_file(environ)
    try:
        return msgspec.json.decode(path.read_bytes(), type=TrustList).directories
    except FileNotFoundError:
        return []
    except (OSError, msgspec.DecodeError) as error:
        raise TrustError(f"cannot read the trusted projects in {path}: {error}") from None


def is_trusted(directory: str | Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user trusted exactly ``directory`` (an unreadable list trusts nothing)."""
    try:
        listed = trusted_directories(environ)
    except TrustError:
        return False
    return os.path.realpath(directory) in listed or str(directory) in listed


def set_trust(directory: Path, trusted: bool, environ: Mapping[str, str] | None = None) -> bool:
    """Add or remove ``directory``; whether the list changed. Written whole and
    renamed into place, mode 0600."""
    path = trust_file(environ)
    entry = os.path.realpath(directory)
    current = trusted_directories(environ)
    if (entry in current) == trusted:
        return False
    updated = sorted({*current, entry}) if trusted else [d for d in current if d != entry]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(msgspec.json.format(msgspec.json.encode(TrustList(updated))) + b"\n")
        os.replace(temporary, path)
    except OSError as error:
        raise TrustError(f"cannot write {path}: {error}") from None
    return True


def untrusted_line(what: list[str], root: str | Path) -> str:
    """The one line that says what an untrusted project's files asked for."""
    return f"ignored until you trust {root} (troupe trust {root}): " + ", ".join(what)
