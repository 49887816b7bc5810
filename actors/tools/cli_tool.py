"""A structured CLI tool as a registry tool (:mod:`actors.tools.cli_registry` reads
the declarations): its argument vector runs in the session's environment, never
through a shell. Apart from the loader so that a session with no tools file does
not make this dataclass at start (issue 36)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from actors.tools.cli_tools import (
    CliToolSpec,
    build_argv,
    json_schema,
    path_parameters,
    tool_env,
    validate,
)
from actors.tools.core.context import ToolContext
from actors.tools.core.shell import format_exec_result
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool
from actors.tools.schema import InvalidArguments
from protocol.environment import ExecCommand

_ASK_MARGIN_S = 30.0


@dataclass(frozen=True)
class CliTool(Tool):
    """A YAML tool: its arguments are checked against every constraint of the
    declaration (enum, pattern, maxLength) before the policy sees the call."""

    spec: CliToolSpec | None = None

    def parse(self, arguments: dict[str, Any]) -> Any:
        assert self.spec is not None
        try:
            return validate(self.spec, arguments)
        except ValueError as exc:
            raise InvalidArguments(str(exc)) from None


def cli_tool(spec: CliToolSpec) -> Tool:
    """The registry tool for one declaration."""

    paths = path_parameters(spec)

    async def execute(values: dict[str, str], context: ToolContext) -> str:
        # Declared paths become the resolved paths the policy judged.
        values = {name: context.path(v) if name in paths else v for name, v in values.items()}
        argv = build_argv(spec, values)
        timeout_ms = context.timeout_ms(spec.timeout_ms)
        request = ExecCommand(
            shlex.join(argv),
            timeout_ms=timeout_ms,
            env_vars=tool_env(spec) or None,
            output_to=context.output_to,
            sandbox=context.sandbox,
            env_allowlist=context.env_allowlist,
            argv=tuple(argv),
        )
        result = await context.environment.ask(request, timeout=timeout_ms / 1000 + _ASK_MARGIN_S)
        return format_exec_result(result)

    return CliTool(
        name=spec.name,
        description=spec.description or f"Runs {spec.cmd}",
        execute=execute,
        json_schema=json_schema(spec),
        category=spec.category,
        paths=PathDeclaration(paths),
        kind=spec.kind,
        spec=spec,
    )
