"""The config files: ``~/.config/troupe/config.toml`` and a project's
``.troupe/config.toml``, read with the standard library's tomllib.

A file is checked against :class:`ConfigFile` (unknown keys are errors, so a typo
is reported instead of silently ignored)::

    provider = "openai"              # the profile: openai, anthropic or gemini
    model = "gpt-5.2-codex"
    wire = "openai-chat"             # openai, openai-chat, anthropic, gemini
    base_url = "http://localhost:11434/v1"
    reasoning_effort = "high"
    max_turns = 40
    instructions = "Answer in British English."
    compaction = "auto"              # auto, manual or off
    context_window = 200000          # tokens; 0: the model catalog's
    max_cost = 5.0                   # dollars a session may spend (0: no cap)
    snapshots = true                 # record the working tree for code rewind
    environment = "docker:python:3.12"  # where sessions run (troupe run --environment)
    store = "postgresql://troupe@db.internal/troupe"  # troupe serve's store (default SQLite)
    isolation = "worktree"           # where subagents work: none, worktree or container
    worktree_copy = [".env"]         # ignored files copied into each worktree
    isolation_image = "python:3.12"  # the image of container isolation

    [providers.anthropic]            # used when that provider is chosen
    model = "claude-sonnet-4-5"
    base_url = "https://api.anthropic.com/v1"

    [ssh_hosts.build-box]            # remote machines: troupe run --ssh-host build-box
    target = "ssh://dev@build.example.com:22"
    working_dir = "/srv/app"

    [mcp_servers.files]              # MCP servers whose tools sessions get (stdio or url)
    command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]

    [provider_options]               # added to each model request's body (docs/cli.md)
    service_tier = "flex"

    [telemetry]                      # OpenTelemetry export (docs/telemetry.md), off by default
    enabled = true
    endpoint = "http://localhost:4318"
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from protocol.mcp import McpServerConfig

PROJECT_FILE = Path(".troupe") / "config.toml"


class ConfigError(ValueError):
    """A config file that cannot be used, naming the file and the reason."""


class ProviderSection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    model: str | None = None
    base_url: str | None = None
    wire: str | None = None
    api_key_env: str | None = None
    """The variable holding this provider's key, when not the usual one."""


class SSHHost(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    target: str
    working_dir: str | None = None
    known_hosts: str | None = None
    client_keys: list[str] = []


class TelemetrySection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[telemetry]``: OpenTelemetry export; the ``OTEL_*`` variables win over it
    (see :mod:`actors.telemetry.settings`)."""

    enabled: bool = False
    endpoint: str | None = None
    """The OTLP/HTTP base URL (``/v1/traces`` and ``/v1/metrics`` are added)."""
    headers: dict[str, str] = {}
    capture_content: bool = False
    """Prompts, answers, tool arguments and outputs as span attributes (off: only
    names, counts, tokens, cost and timings leave the machine)."""


class ConfigFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    provider: str | None = None
    model: str | None = None
    wire: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    reasoning_effort: str | None = None
    max_turns: int | None = None
    instructions: str | None = None
    compaction: str | None = None
    """``auto``, ``manual`` or ``off`` (see ``SessionConfig.compaction``)."""
    context_window: int | None = None
    """The context window in tokens, for models the catalog does not know (0: its)."""
    max_cost: float | None = None
    """Dollars a session may spend (0: no cap)."""
    max_input_cost: float | None = None
    """Dollars one input may spend (0: no cap)."""
    snapshots: bool | None = None
    """Working-tree snapshots at each input and mutating round (docs/snapshots.md)."""
    snapshot_max_file_bytes: int | None = None
    """Files larger than this are left out of snapshots."""
    connect: str | None = None
    """A server to use by default (``ws://...``)."""
    policy: str | None = None
    environment: str | None = None
    """Where ``troupe run`` works: ``docker:IMAGE`` (else this machine)."""
    isolation: str | None = None
    """Where subagents work: ``none``, ``worktree`` or ``container`` (docs/isolation.md)."""
    worktree_copy: list[str] | None = None
    """Ignored files copied into each new worktree (``.env`` and the like)."""
    isolation_image: str | None = None
    """The image of ``container`` isolation (default: the ``docker:`` environment's)."""
    """The safety policy preset of new sessions (``interactive``, ``unattended`` ...)."""
    providers: dict[str, ProviderSection] = {}
    ssh_hosts: dict[str, SSHHost] = {}
    mcp_servers: dict[str, dict[str, Any]] = {}
    """MCP servers by name, each the fields of :class:`McpServerConfig` but its name
    (checked by :func:`load_config`; read them with :func:`mcp_servers_of`)."""
    telemetry: TelemetrySection | None = None
    store: str | None = None
    """Where ``troupe serve`` keeps sessions: ``sqlite`` (``troupe.db`` in the data
    directory, the default) or a ``postgresql://`` URL (docs/deploy.md)."""
    provider_options: dict[str, Any] | None = None
    """Fields added to every model request's body (``SessionConfig.provider_options``);
    ``--provider-option KEY=VALUE`` adds to them and wins."""


def mcp_servers_of(config: ConfigFile, source: str) -> list[McpServerConfig]:
    """The file's MCP servers as declarations; a bad one is a :class:`ConfigError`
    naming the file and the server."""
    servers: list[McpServerConfig] = []
    for name, table in config.mcp_servers.items():
        if "name" in table:
            raise ConfigError(f"{source}: [mcp_servers.{name}]: the name is the table's")
        try:
            servers.append(msgspec.convert({"name": name, **table}, McpServerConfig))
        except (msgspec.ValidationError, ValueError) as error:
            raise ConfigError(f"{source}: [mcp_servers.{name}]: {error}") from None
    return servers


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$TROUPE_CONFIG``, else ``$XDG_CONFIG_HOME/troupe/config.toml``, else
    ``~/.config/troupe/config.toml``."""
    env = os.environ if environ is None else environ
    if env.get("TROUPE_CONFIG"):
        return Path(env["TROUPE_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "troupe" / "config.toml"


def project_config_path(start: Path) -> Path | None:
    """The nearest ``.troupe/config.toml`` in ``start`` or a directory above it."""
    start = start.resolve()
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path) -> ConfigFile:
    """One file, checked; a missing file is an empty config."""
    import tomllib  # here: its parser compiles its patterns on import, and most runs have no file

    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        return ConfigFile()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    try:
        config = msgspec.convert(raw, ConfigFile)
    except msgspec.ValidationError as error:
        raise ConfigError(f"{path}: {error}") from None
    mcp_servers_of(config, str(path))  # a bad server is reported when the file is read
    return config
