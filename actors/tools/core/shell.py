"""shell: run a command in the environment, in its own process group, with a timeout."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.registry import Tool
from actors.tools.tool import OutputLimits
from protocol.environment import ExecCommand, ExecResult

_ASK_MARGIN_S = 30.0
"""How much longer than the command's own timeout the tool waits for its answer
(the kill ladder and, over SSH, the link need a moment)."""


class ShellParams(msgspec.Struct, frozen=True):
    command: Annotated[str, msgspec.Meta(description="The command to run (bash)")]
    timeout_ms: Annotated[
        int | None, msgspec.Meta(description="Timeout in milliseconds (default from settings)")
    ] = None
    description: Annotated[
        str | None, msgspec.Meta(description="What the command does, for people watching")
    ] = None


def format_exec_result(result: ExecResult) -> str:
    """stdout, then stderr, then the exit code and duration on a line of their own."""
    parts = [result.stdout.rstrip("\n")] if result.stdout else []
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    parts.append(f"[exit code: {result.exit_code}, duration: {result.duration_ms}ms]")
    return "\n".join(parts)


async def shell(arguments: ShellParams, context: ToolContext) -> str:
    timeout_ms = context.timeout_ms(arguments.timeout_ms)
    result = await context.environment.ask(
        ExecCommand(
            arguments.command,
            timeout_ms=timeout_ms,
            output_to=context.output_to,
            sandbox=context.sandbox,
            env_allowlist=context.env_allowlist,
        ),
        timeout=timeout_ms / 1000 + _ASK_MARGIN_S,
    )
    return format_exec_result(result)


SHELL = "shell"
"""The shell tool's name (the tool itself is made per profile: :func:`shell_tool`)."""


def shell_tool(default_timeout_ms: int) -> Tool:
    """The shell tool; its description states the profile's default timeout."""
    return Tool(
        SHELL,
        "Execute a shell command (bash) in the working directory. Returns stdout, stderr "
        f"and the exit code. Default timeout {default_timeout_ms} ms; set timeout_ms for "
        "longer commands.",
        shell,
        ShellParams,
        category="write",
        kind="execute",
        runs_commands=True,
        limits=OutputLimits(30_000, "head_tail", lines=256),
        agentic="runs_command",
        hook_names=("Bash",),
    )
