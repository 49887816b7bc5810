"""Defaults for the ``troupe`` command from config files, with where each came from."""

from actors.config.files import (
    ConfigError,
    ConfigFile,
    ProviderSection,
    SSHHost,
    load_config,
    project_config_path,
    user_config_path,
)
from actors.config.resolve import Setting, Settings, mcp_servers_for, resolve

__all__ = [
    "ConfigError",
    "ConfigFile",
    "ProviderSection",
    "SSHHost",
    "Setting",
    "Settings",
    "load_config",
    "mcp_servers_for",
    "project_config_path",
    "resolve",
    "user_config_path",
]
