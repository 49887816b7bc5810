"""The effective settings of a command: flags win, then the project's config file,
then the user's, then the environment's variables, then the defaults; each value
remembers where it came from, so ``troupe config`` can say."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec

from actors import provider_wires as wires
from actors.config.files import (
    ConfigError,
    ConfigFile,
    SSHHost,
    TelemetrySection,
    load_config,
    mcp_servers_of,
    project_config_path,
    user_config_path,
)
from actors.config.trust import is_trusted, untrusted_line
from protocol.mcp import McpServerConfig
from protocol.provider_options import (
    ProviderOptionError,
    check_provider_options,
    parse_provider_options,
)
from protocol.session import SessionConfig

PROVIDERS = wires.profiles()
"""The provider profiles a wire serves by default (``--provider``'s choices)."""
WIRES: Mapping[str, str] = MappingProxyType(
    {w.command_line: w.name for w in wires.BUILTIN if w.command_line}
)
"""The names people type for each wire format (``--wire``, ``wire =``), and the model
layer's names (any spelling of these is accepted: ``openai_chat``, ``openai-responses``);
all read from the wires' descriptors (:mod:`actors.provider_wires`)."""


def _command_line_wire(value: object) -> wires.WireDescriptor | None:
    """The wire a setting names, when it is one the command line offers."""
    found = wires.find(value) if isinstance(value, str) else None
    return found if found is not None and found.command_line else None


DEFAULT_WIRE: Mapping[str, str] = MappingProxyType(
    {profile: wires.of_profile(profile).shown for profile in PROVIDERS}
)
KEY_VARIABLES: Mapping[str, tuple[str, ...]] = wires.FactTable(lambda w: w.key_variables)
URL_VARIABLES: Mapping[str, str] = wires.FactTable(lambda w: w.url_variable)
"""Each wire's key and base-URL variables, by its name in any spelling (the
commands read them here; the facts are the descriptors')."""
FIELDS = ("provider", "wire", "model", "base_url", "reasoning_effort", "max_turns",
          "instructions", "policy", "connect", "environment", "compaction", "context_window",
          "max_cost", "max_input_cost", "store", "provider_options", "isolation",
          "worktree_copy", "isolation_image", "snapshots",
          "snapshot_max_file_bytes")  # fmt: skip
COMPACTION_MODES = ("auto", "manual", "off")
ISOLATIONS = ("none", "worktree", "container")
DEFAULT_SNAPSHOT_CAP = SessionConfig().snapshot_max_file_bytes


class Setting(msgspec.Struct, frozen=True):
    value: Any
    source: str


class Settings(msgspec.Struct, frozen=True):
    """Every effective value with its source; ``api_key`` is never printed."""

    values: dict[str, Setting]
    api_key: Setting
    ssh_hosts: dict[str, SSHHost]
    files: list[str]
    mcp_servers: list[McpServerConfig] = []
    """The files' MCP servers (the project's replace the user's of the same name)."""
    ignored: str | None = None
    """What an untrusted project's file asked for and did not get (one line)."""
    telemetry: TelemetrySection | None = None
    """The ``[telemetry]`` table of the file that wins (a trusted project's, else the user's)."""

    def get(self, name: str) -> Any:
        return self.values[name].value

    @property
    def model_wire(self) -> str:
        """The model layer's name of the chosen wire (``openai_chat``, ...)."""
        return wires.descriptor(self.get("wire")).name


UNTRUSTED_FIELDS = (
    "base_url", "api_key_env", "connect", "environment", "store", "provider_options",
    "isolation_image",
)  # fmt: skip
"""Top-level settings of a project file that send credentials somewhere or choose
where commands run (besides ``mcp_servers`` and ``ssh_hosts``, which also run or
reach things)."""


def _layers(workdir: Path, env: Mapping[str, str]) -> list[tuple[str, ConfigFile]]:
    return _trusted_layers(workdir, env)[0]


def _trusted_layers(
    workdir: Path, env: Mapping[str, str]
) -> tuple[list[tuple[str, ConfigFile]], str | None]:
    """The config files that apply in ``workdir``, the one that wins first, and the
    line saying what an untrusted project's file asked for (then left out)."""
    layers: list[tuple[str, ConfigFile]] = []
    ignored: str | None = None
    project = project_config_path(workdir)
    if project is not None:
        config = load_config(project)
        root = project.parent.parent
        if not is_trusted(root, env):
            config, what = _without_reach(config)
            if what:
                ignored = f"{project}: " + untrusted_line(what, root)
        layers.append((str(project), config))
    user = user_config_path(env)
    if user.is_file():
        layers.append((str(user), load_config(user)))
    return layers, ignored


def _without_reach(config: ConfigFile) -> tuple[ConfigFile, list[str]]:
    """An untrusted project's file without what runs code or sends credentials,
    and the names of what was taken out."""
    what = [name for name in UNTRUSTED_FIELDS if getattr(config, name) is not None]
    what += [f"mcp_servers.{name}" for name in config.mcp_servers]
    what += [f"ssh_hosts.{name}" for name in config.ssh_hosts]
    what += ["telemetry"] if config.telemetry is not None else []
    providers = {}
    for name, section in config.providers.items():
        what += [f"providers.{name}.{field}" for field in ("base_url", "api_key_env")
                 if getattr(section, field) is not None]  # fmt: skip
        providers[name] = msgspec.structs.replace(section, base_url=None, api_key_env=None)
    stripped = msgspec.structs.replace(
        config, base_url=None, api_key_env=None, connect=None, environment=None,
        provider_options=None, store=None,
        mcp_servers={}, ssh_hosts={}, providers=providers, telemetry=None,
        isolation_image=None,
    )  # fmt: skip
    return stripped, what


def _mcp_servers(layers: list[tuple[str, ConfigFile]]) -> list[McpServerConfig]:
    by_name: dict[str, McpServerConfig] = {}
    for source, config in reversed(layers):  # the user's, then the project's over them
        by_name.update((server.name, server) for server in mcp_servers_of(config, source))
    return list(by_name.values())


def mcp_servers_for(
    workdir: Path, environ: Mapping[str, str] | None = None
) -> list[McpServerConfig]:
    """The MCP servers the config files declare for sessions in ``workdir`` (an
    editor's session has its own directory, so ``troupe acp`` asks per session)."""
    return _mcp_servers(_layers(workdir, os.environ if environ is None else environ))


def resolve(
    flags: Mapping[str, Any],
    workdir: Path,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Effective settings for ``flags`` (None = not given) in ``workdir``."""
    env = os.environ if environ is None else environ
    layers, ignored = _trusted_layers(workdir, env)
    values: dict[str, Setting] = {}

    def pick(name: str, default: Any, default_source: str = "default") -> Setting:
        if flags.get(name) is not None:
            return Setting(flags[name], f"--{name.replace('_', '-')}")
        provider = values["provider"].value if "provider" in values else None
        for source, config in layers:
            section = config.providers.get(provider) if provider else None
            given = getattr(section, name, None) if section is not None else None
            if given is not None:
                return Setting(given, f"{source} [providers.{provider}]")
            given = getattr(config, name, None)
            if given is not None:
                return Setting(given, source)
        return Setting(default, default_source)

    values["provider"] = pick("provider", "openai")
    if values["provider"].value not in PROVIDERS:
        raise ConfigError(_choice("provider", values["provider"], PROVIDERS))
    values["wire"] = pick("wire", DEFAULT_WIRE[values["provider"].value], "default for provider")
    chosen = _command_line_wire(values["wire"].value)
    if chosen is None:
        raise ConfigError(_choice("wire", values["wire"], wires.command_line_names()))
    values["wire"] = Setting(chosen.command_line, values["wire"].source)
    url_variable = chosen.url_variable
    if env.get(url_variable):
        values["base_url"] = pick("base_url", env[url_variable], f"${url_variable}")
    else:
        values["base_url"] = pick("base_url", None, "the provider's hosted API")
    values["model"] = pick("model", None, "the provider profile's default")
    values["reasoning_effort"] = pick("reasoning_effort", None)
    values["max_turns"] = pick("max_turns", 0, "default (0 = unlimited)")
    values["instructions"] = pick("instructions", None)
    values["policy"] = pick("policy", "interactive")
    values["connect"] = pick("connect", None, "default (a running local server, else embedded)")
    values["environment"] = pick("environment", None, "default (this machine)")
    values["compaction"] = pick("compaction", "auto")
    if values["compaction"].value not in COMPACTION_MODES:
        raise ConfigError(_choice("compaction", values["compaction"], COMPACTION_MODES))
    values["context_window"] = pick("context_window", 0, "default (0 = the model catalog's)")
    values["store"] = pick("store", "", "default (SQLite: troupe.db in the data directory)")
    values["isolation"] = pick("isolation", "none", "default (subagents share the directory)")
    if values["isolation"].value not in ISOLATIONS:
        raise ConfigError(_choice("isolation", values["isolation"], ISOLATIONS))
    values["worktree_copy"] = pick("worktree_copy", [], "default (none)")
    docker = values["environment"].value
    image = docker.partition(":")[2].strip() if isinstance(docker, str) else ""
    if docker and docker.startswith("docker:") and image:
        values["isolation_image"] = pick("isolation_image", image, "the docker: environment's")
    else:
        values["isolation_image"] = pick("isolation_image", None)
    for cap in ("max_cost", "max_input_cost"):
        values[cap] = pick(cap, 0.0, "default (0 = no cap)")
        if not isinstance(values[cap].value, int | float) or values[cap].value < 0:
            raise ConfigError(
                f"{cap} must be a number of dollars, 0 or more ({values[cap].source})"
            )
    values["snapshots"] = pick("snapshots", True)
    if not isinstance(values["snapshots"].value, bool):
        raise ConfigError(f"snapshots must be true or false ({values['snapshots'].source})")
    cap = pick("snapshot_max_file_bytes", DEFAULT_SNAPSHOT_CAP, "default (5 MiB)")
    if isinstance(cap.value, bool) or not isinstance(cap.value, int) or cap.value < 1:
        raise ConfigError(f"snapshot_max_file_bytes must be a number of bytes ({cap.source})")
    values["snapshot_max_file_bytes"] = cap
    if not isinstance(values["context_window"].value, int) or values["context_window"].value < 0:
        raise ConfigError(
            f"context_window must be 0 or a number of tokens ({values['context_window'].source})"
        )
    values["provider_options"] = _provider_options(flags, layers)
    key = _api_key(flags, layers, values["provider"].value, chosen, env)
    hosts: dict[str, SSHHost] = {}
    for _, config in reversed(layers):
        hosts.update(config.ssh_hosts)
    files = [source for source, _ in layers]
    telemetry = next((c.telemetry for _, c in layers if c.telemetry is not None), None)
    return Settings(values, key, hosts, files, _mcp_servers(layers), ignored, telemetry)


def _provider_options(flags: Mapping[str, Any], layers: list[tuple[str, ConfigFile]]) -> Setting:
    """The files' ``[provider_options]`` (the project's over the user's), then each
    ``--provider-option KEY=VALUE`` over them; Troupe's own fields are refused."""
    options: dict[str, Any] = {}
    sources: list[str] = []
    for source, config in reversed(layers):
        if config.provider_options:
            options.update(config.provider_options)
            sources.append(source)
    try:
        check_provider_options(options)
        given = flags.get("provider_options")
        if given:
            options.update(parse_provider_options(given))
            sources.append("--provider-option")
    except ProviderOptionError as error:
        raise ConfigError(f"{error} ({', '.join(sources) or '--provider-option'})") from None
    return Setting(options, ", ".join(sources) or "default (none)")


def _api_key(
    flags: Mapping[str, Any],
    layers: list[tuple[str, ConfigFile]],
    provider: str,
    wire: wires.WireDescriptor,
    env: Mapping[str, str],
) -> Setting:
    if flags.get("api_key"):
        return Setting(flags["api_key"], "--api-key")
    for source, config in layers:
        section = config.providers.get(provider)
        variable = (section.api_key_env if section else None) or config.api_key_env
        if variable:
            if env.get(variable):
                return Setting(env[variable], f"${variable} (named in {source})")
            raise ConfigError(f"{source} names api_key_env {variable!r}, which is not set")
    for variable in wire.key_variables:
        if env.get(variable):
            return Setting(env[variable], f"${variable}")
    return Setting("", "not set")


def _choice(name: str, setting: Setting, choices: tuple[str, ...]) -> str:
    return (
        f"unknown {name} {setting.value!r} (from {setting.source}); "
        f"choose one of {', '.join(choices)}"
    )
