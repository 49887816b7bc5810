"""terminal: ephemeral commands by default, or one persistent shell per session that
keeps its working directory and environment (agentic-behavior-tool.md 6). Both run
under the session's OS sandbox and variable allowlist; the persistent shell in one
long-lived sandbox."""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.core.shell import _ASK_MARGIN_S, format_exec_result
from actors.tools.registry import Tool, ToolFailure
from protocol.environment import CloseTerminal, ExecCommand, RunInTerminal, TerminalOutput

REFUSED_WHILE_PERSISTENT = (
    "A persistent terminal is open: run the command with persistent=true (it keeps "
    "the directory and variables), or close it first with close=true."
)


class TerminalParams(msgspec.Struct, frozen=True):
    command: Annotated[str, msgspec.Meta(description="The command to run (bash)")] = ""
    persistent: Annotated[
        bool,
        msgspec.Meta(
            description="Run in this session's persistent shell, which keeps the working "
            "directory and exported variables across calls (opened on first use)"
        ),
    ] = False
    close: Annotated[
        bool, msgspec.Meta(description="Close the persistent shell and end its processes")
    ] = False
    timeout_ms: Annotated[
        int | None, msgspec.Meta(description="Timeout in milliseconds (default from settings)")
    ] = None


def format_terminal_output(result: TerminalOutput) -> str:
    parts = [result.output.rstrip("\n")] if result.output else []
    status = "none" if result.exit_code is None else str(result.exit_code)
    parts.append(
        f"[exit code: {status}, cwd: {result.working_dir}, duration: {result.duration_ms}ms]"
    )
    return "\n".join(parts)


async def terminal(arguments: TerminalParams, context: ToolContext) -> str:
    slot = context.terminal
    if slot is None:
        raise ToolFailure("this session has no terminal")
    if arguments.close:
        slot.open = False
        closed = await context.environment.ask(CloseTerminal(slot.terminal_id))
        return (
            "The persistent terminal is closed." if closed else "No persistent terminal was open."
        )
    if not arguments.command:
        raise ToolFailure("command is required unless close=true")
    timeout_ms = context.timeout_ms(arguments.timeout_ms)
    ask_timeout = timeout_ms / 1000 + _ASK_MARGIN_S
    if not arguments.persistent:
        if slot.open:
            raise ToolFailure(REFUSED_WHILE_PERSISTENT)
        request = ExecCommand(
            arguments.command,
            timeout_ms=timeout_ms,
            output_to=context.output_to,
            sandbox=context.sandbox,
            env_allowlist=context.env_allowlist,
        )
        return format_exec_result(await context.environment.ask(request, timeout=ask_timeout))
    slot.open = True
    # The shell lives in one long-lived sandbox with the policy's variables; the
    # environment restarts it if these settings change.
    run = RunInTerminal(
        arguments.command,
        slot.terminal_id,
        timeout_ms,
        sandbox=context.sandbox,
        env_allowlist=context.env_allowlist,
    )
    result: TerminalOutput = await context.environment.ask(run, timeout=ask_timeout)
    slot.open = not result.closed
    return format_terminal_output(result)


TERMINAL = Tool(
    "terminal",
    "Run a bash command. By default each call is a fresh shell in the working "
    "directory; with persistent=true the command runs in this session's long-lived "
    "shell, where cd and exported variables carry over to the next persistent call. "
    "close=true ends that shell. Ephemeral calls are refused while it is open.",
    terminal,
    TerminalParams,
    category="write",
    kind="execute",
    runs_commands=True,
    agentic="runs_command",
    hook_names=("Bash",),
)
