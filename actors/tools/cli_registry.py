"""Structured CLI tools made real: each YAML declaration becomes a registry tool
that runs its argument vector in the session's environment, never through a shell.

The user's file (``$XDG_CONFIG_HOME/troupe/tools.yaml``, default
``~/.config/troupe/tools.yaml``) is read on this machine; the project's
(``.troupe/tools.yaml`` in the working directory) is read through the environment,
so an SSH session gets the tools of the project on that host. A project's tools
load only once the user has trusted its directory (:mod:`actors.config.trust`);
until then a warning names what was ignored. A project tool replaces a user tool
of the same name. A file that cannot be used is a warning,
never a failed session.
"""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from actors.config.trust import is_trusted, untrusted_line
from actors.kernel import ActorError, ActorRef, Rejection
from actors.tools.cli_tools import (
    CliToolError,
    CliToolSpec,
    build_argv,
    json_schema,
    load_tools_file,
    parse_tools_text,
    path_parameters,
    tool_env,
    validate,
)
from actors.tools.core.context import ToolContext
from actors.tools.core.shell import format_exec_result
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool
from actors.tools.schema import InvalidArguments
from environments.errors import FileNotFound
from environments.project_files import read_project_file
from protocol.environment import ExecCommand

PROJECT_TOOLS = ".troupe/tools.yaml"
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


def user_tools_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "troupe" / "tools.yaml"


async def load_cli_tools(
    environment: ActorRef, working_dir: str, environ: Mapping[str, str] | None = None
) -> tuple[list[Tool], list[str]]:
    """The tools both files declare, and a warning for each file that is unusable."""
    specs: dict[str, CliToolSpec] = {}
    warnings: list[str] = []
    user_file = user_tools_path(environ)
    try:
        for spec in await trio.to_thread.run_sync(load_tools_file, user_file):
            specs[spec.name] = spec
    except CliToolError as exc:
        warnings.append(f"CLI tools not loaded: {exc}")
    project_file = posixpath.join(working_dir, PROJECT_TOOLS)
    try:
        content = await read_project_file(environment, project_file, working_dir)
        if await trio.to_thread.run_sync(is_trusted, working_dir, environ):
            for spec in parse_tools_text(content.text, project_file):
                specs[spec.name] = spec
        else:
            names = [spec.name for spec in _declared(content.text, project_file)]
            shown = [f"tool {name}" for name in names] or ["its tools"]
            warnings.append(f"{project_file}: {untrusted_line(shown, working_dir)}")
    except FileNotFound:
        pass
    except (CliToolError, ActorError, Rejection) as exc:
        warnings.append(f"CLI tools not loaded: {exc}")
    return [cli_tool(spec) for spec in specs.values()], warnings


def _declared(text: str, source: str) -> list[CliToolSpec]:
    """An untrusted file's declarations, only to name them in the warning."""
    try:
        return parse_tools_text(text, source)
    except CliToolError:
        return []
