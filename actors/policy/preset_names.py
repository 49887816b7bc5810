"""The names of the policy presets, without the presets: a command checks a name it
was given (``--policy``, a config file) before anything starts, and building the
presets imports the whole policy engine (command parsing, the blocklist), which a
run through a running server never uses. :mod:`actors.policy.presets` is the
source; a test keeps the two equal."""

PRESET_NAMES = frozenset(
    {
        "interactive",
        "agent-loop-and-tool-system",
        "agentic-behavior-tool",
        "adr-040",
        "unattended",
        "sandboxed",
        "permissive",
    }
)

UNSANDBOXED_PRESETS = frozenset({"permissive"})
"""The presets whose commands run without the OS sandbox (``sandbox = "off"``): the
header of ``troupe run`` says so without building the presets."""
