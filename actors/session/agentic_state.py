"""Agentic mode's state tracker and the state block (agentic-behavior-tool.md 2.2, 3).

The block is concise and about the present: the loop, the objective, iteration n
of max, the terminal's working directory and last command, the files changed.
History already holds every call and result, so the block never repeats them; it
is rebuilt each iteration and placed just before the latest user prompt, never
stored in history, so it costs one short message per request and nothing more.
"""

from __future__ import annotations

import msgspec

LAST_OUTPUT_CHARS = 500


class AgenticState(msgspec.Struct, frozen=True):
    """What the agent is doing now, as the state block shows it."""

    user_prompt: str
    objective: str
    max_iterations: int
    iteration: int = 1
    working_dir: str | None = None
    terminal_open: bool = False
    last_command: str | None = None
    last_output: str | None = None
    last_exit_code: int | None = None
    files_modified: tuple[str, ...] = ()

    def next_iteration(self) -> AgenticState:
        return msgspec.structs.replace(self, iteration=self.iteration + 1)

    def after_command(
        self, command: str, output: str, exit_code: int | None, working_dir: str | None = None
    ) -> AgenticState:
        return msgspec.structs.replace(
            self,
            last_command=command,
            last_output=_tail(output),
            last_exit_code=exit_code,
            working_dir=working_dir or self.working_dir,
        )

    def after_write(self, path: str) -> AgenticState:
        if path in self.files_modified:
            return self
        return msgspec.structs.replace(self, files_modified=(*self.files_modified, path))


def _tail(output: str) -> str:
    if len(output) <= LAST_OUTPUT_CHARS:
        return output
    return "[...]" + output[-LAST_OUTPUT_CHARS:]


def state_block(state: AgenticState) -> str:
    """The block injected before the latest user prompt."""
    lines = [
        "<agentic_state>",
        "You are in an agentic loop: keep working with tools until the objective is met, "
        "then call complete(result, status).",
        f"Original prompt: {state.user_prompt}",
        f"Objective: {state.objective}",
        f"Iteration: {state.iteration} of {state.max_iterations}",
    ]
    if state.terminal_open or state.working_dir:
        lines.append(f"Working directory: {state.working_dir or '(unknown)'}")
    if state.last_command is not None:
        lines.append(f"Last command: {state.last_command}")
        if state.last_exit_code is not None:
            lines.append(f"Exit code: {state.last_exit_code}")
        if state.last_output:
            lines.append(f"Last output (end):\n{state.last_output}")
    modified = ", ".join(state.files_modified) if state.files_modified else "none"
    lines.append(f"Files modified this session: {modified}")
    lines.append("</agentic_state>")
    return "\n".join(lines)
