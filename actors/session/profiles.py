"""Provider profiles (coding-agent-loop-spec §3): each model family gets the tools
and instructions it was trained with, plus capability flags the loop consults.

The tool sets follow §3.4 to §3.6. The base instructions are Troupe's own wording
of the topics §6.2 asks each profile to cover; they are not copies of any vendor's
prompt.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec

from actors.tools.core.edit import EDIT_FILE
from actors.tools.core.files import LIST_DIR, READ_FILE, READ_MANY_FILES, WRITE_FILE
from actors.tools.core.patch import APPLY_PATCH
from actors.tools.core.plan import UPDATE_PLAN
from actors.tools.core.search import GLOB, GREP
from actors.tools.core.shell import shell_tool
from actors.tools.registry import ToolRegistry
from protocol.environment import DEFAULT_TIMEOUT_MS
from protocol.llm import ToolDefinition
from protocol.session import ToolCalling

if TYPE_CHECKING:
    from protocol.session import SessionConfig

ANTHROPIC_SHELL_TIMEOUT_MS = 120_000
"""Claude Code's convention (§3.5); it overrides the session default for this profile."""

_COMMON_PRACTICE = """\
Work like a careful senior engineer. Read the relevant code before changing it and
follow the conventions you find. Keep changes focused on the task; do not reformat
or rename what you were not asked to touch. After a change, run the project's
tests or the smallest command that shows it works, and read the output before you
report success. When a command or tool fails, read the error and change your
approach instead of repeating the same call. Never print or copy secrets. When the
task is done, reply with a short summary of what you changed and how you checked
it, without calling a tool."""

OPENAI_INSTRUCTIONS = f"""\
You are a coding agent running in a terminal-like environment on the user's
machine or a remote host. You read files, run commands and edit code to complete
the task you are given, then report back.

Tools: use `shell` for commands (it runs `bash -c` in the working directory; set
`timeout_ms` for long runs), `read_file`, `grep` and `glob` to find and read code.
Make every modification with `apply_patch`: a patch starts with '*** Begin Patch'
and ends with '*** End Patch'; each file is an '*** Add File: <path>', '*** Delete
File: <path>' or '*** Update File: <path>' section; update hunks start with '@@'
(optionally followed by a line that locates the change) and hold context lines
starting with a space, removed lines starting with '-' and added lines starting
with '+'. Give about three lines of context around each change. Use `write_file`
only to create a new file in one go.

{_COMMON_PRACTICE}"""

ANTHROPIC_INSTRUCTIONS = f"""\
You are an interactive coding agent that helps with software engineering tasks:
fixing bugs, adding features, refactoring, explaining code. You act through tools
and finish with a concise answer.

Choosing tools: search with `grep` and `glob` rather than shell commands like find
or grep; read a file with `read_file` before you edit it. Prefer editing existing
files with `edit_file` over writing new ones, and never create documentation files
unless asked. `edit_file` replaces `old_string` with `new_string`: `old_string` must
match the file exactly, including indentation, and must be unique in the file
(include surrounding lines to make it unique, or set `replace_all`). Use
`write_file` for new files or complete rewrites. `shell` runs bash commands with a
120 second default timeout.

{_COMMON_PRACTICE}"""

GEMINI_INSTRUCTIONS = f"""\
You are a command-line coding agent specialising in software engineering tasks.
Your goal is to help the user safely and efficiently, using the available tools.

Conventions: the project's GEMINI.md and AGENTS.md files (included below when
present) describe its rules; follow them. Understand before acting: use `glob`,
`grep`, `list_dir`, `read_file` and `read_many_files` to learn the structure and
style of the code. Edit with `edit_file` (exact `old_string` to `new_string`
replacement) or `write_file` for new files. Run commands with `shell`; explain any
command that changes the system before running it.

{_COMMON_PRACTICE}"""


class ProviderProfile(msgspec.Struct):
    """Tools, instructions and capabilities for one model family (a Struct, not a
    dataclass: a dataclass's creation costs every start about 4 M instructions)."""

    id: str
    model: str
    registry: ToolRegistry
    base_instructions: str
    project_doc_files: tuple[str, ...]
    supports_reasoning: bool = True
    supports_streaming: bool = True
    supports_parallel_tool_calls: bool = True
    context_window_size: int = 200_000
    default_command_timeout_ms: int | None = None
    """When set, overrides the session's default command timeout for this profile."""
    options: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    tool_calling: ToolCalling = "auto"
    """Native tool calls, text calls (models and servers without them), or native
    with a switch to text when an OpenAI-compatible server rejects ``tools``."""

    def model_for(self, config: SessionConfig) -> str:
        """The model a session with ``config`` calls: its own, else the profile's."""
        return config.model or self.model

    def derive(self, model: str | None = None) -> ProviderProfile:
        """A copy with its own registry (and optionally another model), so a session
        can add or drop tools without touching the profile it was given."""
        return msgspec.structs.replace(
            self, model=model or self.model, registry=self.registry.copy()
        )

    def tools(self) -> list[ToolDefinition]:
        return self.registry.definitions()

    def provider_options(self) -> dict[str, dict[str, Any]]:
        return self.options


def openai_profile(model: str = "gpt-5.2-codex") -> ProviderProfile:
    registry = ToolRegistry(
        [READ_FILE, APPLY_PATCH, WRITE_FILE, shell_tool(DEFAULT_TIMEOUT_MS), GREP, GLOB,
         UPDATE_PLAN]
    )  # fmt: skip
    return ProviderProfile(
        id="openai",
        model=model,
        registry=registry,
        base_instructions=OPENAI_INSTRUCTIONS,
        project_doc_files=("AGENTS.md", ".codex/instructions.md"),
        context_window_size=400_000,
    )


def anthropic_profile(model: str = "claude-sonnet-4-5") -> ProviderProfile:
    registry = ToolRegistry(
        [READ_FILE, WRITE_FILE, EDIT_FILE, shell_tool(ANTHROPIC_SHELL_TIMEOUT_MS), GREP, GLOB]
    )
    return ProviderProfile(
        id="anthropic",
        model=model,
        registry=registry,
        base_instructions=ANTHROPIC_INSTRUCTIONS,
        project_doc_files=("AGENTS.md", "CLAUDE.md"),
        context_window_size=200_000,
        default_command_timeout_ms=ANTHROPIC_SHELL_TIMEOUT_MS,
    )


def gemini_profile(model: str = "gemini-3-pro") -> ProviderProfile:
    registry = ToolRegistry(
        [
            READ_FILE,
            READ_MANY_FILES,
            WRITE_FILE,
            EDIT_FILE,
            shell_tool(DEFAULT_TIMEOUT_MS),
            GREP,
            GLOB,
            LIST_DIR,
        ]
    )
    return ProviderProfile(
        id="gemini",
        model=model,
        registry=registry,
        base_instructions=GEMINI_INSTRUCTIONS,
        project_doc_files=("AGENTS.md", "GEMINI.md"),
        context_window_size=1_000_000,
    )


PROFILES = MappingProxyType(
    {"openai": openai_profile, "anthropic": anthropic_profile, "gemini": gemini_profile}
)
"""Profile factories by id; each call builds a fresh profile (registries are mutable)."""
