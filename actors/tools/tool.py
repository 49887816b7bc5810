"""A tool and every fact about it, declared where the tool is defined.

The registry, the policy, the output truncation, the agentic-state tracker, the
hooks and the hosts (ACP, the terminal, telemetry) read these facts from the
:class:`Tool`; none of them keeps a table keyed by a tool's name, so a new tool
is its definition plus its registration (docs/extending.md, "Add a tool"). A
tool that does not declare a fact gets the cautious default: it may change
things, it is judged as ``write``, it shows as ``other``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from actors.policy.categories import Category
from actors.tools.paths import NO_PATHS, PathDeclaration
from actors.tools.schema import check_against_schema, parse_arguments, schema_of
from protocol.diff_fields import DiffFields  # declared here, carried by the events
from protocol.llm import ToolDefinition

if TYPE_CHECKING:
    from actors.tools.registry import ToolOutput

Executor = Callable[[Any, Any], Awaitable["str | ToolOutput"]]
"""``await execute(arguments, context) -> output``; arguments are the parsed Struct
(or the plain dict, for a tool described by a JSON Schema)."""

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""What a call does, in ACP's words (the editor picks its icon by it; the terminal
and telemetry read it too)."""

TruncationMode = Literal["head_tail", "tail"]

AgenticRole = Literal["none", "runs_command", "writes_files", "enters", "completes"]
"""What a successful call means to agentic mode's state block: ``runs_command``
runs its ``command`` argument (the block shows it, its output's end and exit
code); ``writes_files`` writes the files its declared paths name; ``enters`` and
``completes`` start and end agentic mode."""


class OutputLimits(msgspec.Struct, frozen=True):
    """How much of a call's output the model reads (coding-agent-loop-spec §5):
    ``chars`` first, cut by ``mode``, then at most ``lines`` lines (None: no line
    limit). The full output is in the event stream either way; a session's
    ``tool_output_limits``/``tool_line_limits`` override these by tool name."""

    chars: int = 30_000
    mode: TruncationMode = "head_tail"
    lines: int | None = None


DEFAULT_LIMITS = OutputLimits()
"""For a tool that declares none (a custom or MCP tool)."""


@dataclass(frozen=True)
class Tool:
    """A tool: its name and description for the model, its parameters, its code,
    and the facts the rest of Troupe reads from it."""

    name: str
    description: str
    execute: Executor
    parameters: type[msgspec.Struct] | None = None
    json_schema: dict[str, Any] | None = None
    category: Category = "write"
    """read, write or admin: what the policy judges the call by (a shell command's
    category comes from its command line instead). Undeclared tools count as write."""
    paths: PathDeclaration = NO_PATHS
    """Which arguments are paths: the policy resolves and judges them, and the tool
    uses the resolved paths (:mod:`actors.tools.paths`)."""
    kind: ToolKind = "other"
    """What a call does; every ``tool_call_start`` event carries it (``tool_kind``)."""
    mutating: bool | None = None
    """Whether a call can change anything (files, processes, the world); None: as
    its category says, so only a ``read`` tool is taken as one that cannot."""
    runs_commands: bool = False
    """Its ``command`` argument is a shell line: the policy parses it, per call, for
    the category (instead of the declared one, unless that is ``admin``), and the
    command runs in the OS sandbox."""
    limits: OutputLimits = DEFAULT_LIMITS
    """How much of its output the model reads (the events keep all of it)."""
    agentic: AgenticRole = "none"
    hook_names: tuple[str, ...] = ()
    """The names hooks written for Claude Code or Codex know this tool by, the one
    a hook reads first (docs/hooks.md)."""
    diff: DiffFields | None = None
    """Which arguments show a call as a diff (None: it is not shown as one)."""
    _schema: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.parameters is None) == (self.json_schema is None):
            raise ValueError(f"tool {self.name!r} needs either parameters or json_schema")
        object.__setattr__(self, "_schema", self.json_schema)

    def _parameters_schema(self) -> dict[str, Any]:
        """The JSON Schema of the parameters, made by the first call that needs it,
        not when the tool is defined: Troupe defines its tools at import, and their
        schemas, made then, were a large part of every command's start (issue 36)."""
        schema = self._schema
        if schema is None:
            assert self.parameters is not None  # __post_init__: one or the other
            schema = schema_of(self.parameters)
            object.__setattr__(self, "_schema", schema)
        return schema

    @property
    def is_mutating(self) -> bool:
        return self.mutating if self.mutating is not None else self.category != "read"

    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self._parameters_schema())

    def parse(self, arguments: dict[str, Any]) -> Any:
        if self.parameters is not None:
            return parse_arguments(self.parameters, arguments)
        return check_against_schema(self._parameters_schema(), arguments)

    def written_paths(self, arguments: dict[str, Any]) -> list[str]:
        """The files a successful call wrote (a ``writes_files`` tool's declared paths)."""
        return self.paths.of(arguments) if self.agentic == "writes_files" else []
