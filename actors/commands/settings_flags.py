"""The settings a command runs with: its flags over the config files and the
environment (:func:`actors.config.resolve`), checked before anything starts.

Its own module because every command that starts a runtime (``run``, ``serve``,
``acp``, the interactive mode ...) needs it, and importing it must not import
any one command's machinery: ``troupe acp`` answers ``initialize`` sooner
without ``run``'s (issue #36)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from actors.commands.errors import EXIT_BAD_INPUT, CommandError
from actors.config import ConfigError, Settings, resolve

SETTING_FLAGS = ("provider", "wire", "model", "base_url", "api_key", "reasoning_effort",
                 "max_turns", "instructions", "policy", "connect", "environment",
                 "compaction", "context_window", "max_cost", "max_input_cost",
                 "store", "provider_options", "isolation")  # fmt: skip


def settings_for(args: argparse.Namespace, workdir: Path) -> Settings:
    """The flags a command was given over what the files and the environment say;
    a bad config is bad input (exit 2), a setting ignored is said on stderr."""
    flags = {name: getattr(args, name, None) for name in SETTING_FLAGS}
    try:
        settings = resolve(flags, workdir)
    except ConfigError as error:
        raise CommandError(str(error), EXIT_BAD_INPUT) from None
    if settings.ignored is not None:
        print(f"troupe: {settings.ignored}", file=sys.stderr)
    return settings


def check_policy(name: str | None) -> None:
    """An unknown policy name is bad input, said before anything starts."""
    from actors.policy.preset_names import PRESET_NAMES

    if name is None or name in PRESET_NAMES:
        return
    from actors.policy.presets import UnknownPreset, policy_preset

    try:
        policy_preset(name)
    except UnknownPreset as error:
        raise CommandError(f"--policy: {error}", EXIT_BAD_INPUT) from None
