"""Loop presets: each seed document's defaults as one named set of settings.

A preset is data: the :class:`SessionConfig` values a document asks for (iteration
limit, command timeouts, output limits, loop options) and, by name only, the
policy preset of the same stance (``actors/policy/presets.py``; applying it is the
policy engine's job). Explicit settings given with a preset win over it.
"""

from __future__ import annotations

from types import MappingProxyType

import msgspec

from actors.tools.core.shell import SHELL
from protocol.session import SessionConfig


class LoopPreset(msgspec.Struct, frozen=True):
    """A document's defaults: ``config`` for the session, ``policy`` by name."""

    name: str
    source: str
    config: SessionConfig
    policy: str | None = None


LOOP_PRESETS = MappingProxyType(
    {
        "coding-agent-loop": LoopPreset(
            "coding-agent-loop",
            "coding-agent-loop-spec.md: no iteration limit, 10 s commands (600 s at most)",
            SessionConfig(),
            policy="interactive",
        ),
        "agent-loop-and-tool-system": LoopPreset(
            "agent-loop-and-tool-system",
            "agent-loop-and-tool-system.md: 20 iterations, 120 s commands, 200 KB output",
            SessionConfig(
                max_tool_rounds_per_input=20,
                default_command_timeout_ms=120_000,
                tool_output_limits={SHELL: 200_000},
                iteration_warning_ratio=0.8,
            ),
            policy="agent-loop-and-tool-system",
        ),
        "agentic-behavior-tool": LoopPreset(
            "agentic-behavior-tool",
            "agentic-behavior-tool.md: agentic mode (25 iterations), commands 60 s "
            "(300 s at most), terminal",
            SessionConfig(
                agentic_mode=True,
                agentic_max_iterations=25,
                max_tool_rounds_per_input=25,
                default_command_timeout_ms=60_000,
                max_command_timeout_ms=300_000,
                iteration_warning_ratio=0.8,
                terminal_tool=True,
            ),
            policy="agentic-behavior-tool",
        ),
        "forge-agent-loop-prd": LoopPreset(
            "forge-agent-loop-prd",
            "forge-agent-loop-prd.md: 25 iterations, loop-breaking tools, repeated "
            "errors warned after 3 and escalated after 5",
            SessionConfig(
                max_tool_rounds_per_input=25,
                loop_breaking_tools=True,
                iteration_warning_ratio=0.8,
                repeated_error_warn_after=3,
                repeated_error_escalate_after=5,
            ),
            policy="interactive",
        ),
        "adr-040": LoopPreset(
            "adr-040",
            "adr-040-agentic-loop.md: 10 iterations per message",
            SessionConfig(max_tool_rounds_per_input=10, iteration_warning_ratio=0.8),
            policy="adr-040",
        ),
    }
)


class UnknownLoopPreset(ValueError):
    """A preset name that does not exist; the message lists the ones that do."""


def loop_preset(name: str) -> LoopPreset:
    try:
        return LOOP_PRESETS[name]
    except KeyError:
        known = ", ".join(LOOP_PRESETS)
        raise UnknownLoopPreset(f"unknown preset {name!r} (known: {known})") from None


def preset_config(name: str, overrides: SessionConfig | None = None) -> SessionConfig:
    """The preset's settings, with every field of ``overrides`` that differs from
    the default taking precedence (the Python API and ``create_session``)."""
    config = loop_preset(name).config
    if overrides is None:
        return config
    default = SessionConfig()
    changed = {
        field: getattr(overrides, field)
        for field in SessionConfig.__struct_fields__
        if getattr(overrides, field) != getattr(default, field)
    }
    return msgspec.structs.replace(config, **changed)
