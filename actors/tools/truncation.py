"""Tool output truncation (coding-agent-loop-spec §5), characters first, then lines.

Character truncation always runs first: it is the only safeguard against a file of
two 10 MB lines. The marker texts are the spec's, so the model is told that output
was cut, how much, and that the full output is in the event stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

TruncationMode = Literal["head_tail", "tail"]

DEFAULT_CHAR_LIMITS: Mapping[str, int] = {
    "read_file": 50_000,
    "read_many_files": 50_000,
    "shell": 30_000,
    "grep": 20_000,
    "glob": 20_000,
    "list_dir": 20_000,
    "edit_file": 10_000,
    "apply_patch": 10_000,
    "write_file": 1_000,
    "spawn_agent": 20_000,
}
DEFAULT_MODES: Mapping[str, TruncationMode] = {
    "read_file": "head_tail",
    "read_many_files": "head_tail",
    "shell": "head_tail",
    "grep": "tail",
    "glob": "tail",
    "list_dir": "tail",
    "edit_file": "tail",
    "apply_patch": "tail",
    "write_file": "tail",
    "spawn_agent": "head_tail",
}
DEFAULT_LINE_LIMITS: Mapping[str, int | None] = {
    "shell": 256,
    "grep": 200,
    "glob": 500,
    "read_file": None,
    "edit_file": None,
}
FALLBACK_CHAR_LIMIT = 30_000
"""For tools the tables do not name (custom tools)."""


def truncate_output(output: str, max_chars: int, mode: TruncationMode) -> str:
    """Cut ``output`` to about ``max_chars`` characters, saying so."""
    if len(output) <= max_chars:
        return output
    removed = len(output) - max_chars
    if mode == "head_tail":
        half = max_chars // 2
        return (
            output[:half]
            + f"\n\n[WARNING: Tool output was truncated. {removed} characters were removed "
            "from the middle. The full output is available in the event stream. If you need "
            "to see specific parts, re-run the tool with more targeted parameters.]\n\n"
            + output[len(output) - half :]
        )
    return (
        f"[WARNING: Tool output was truncated. First {removed} characters were removed. "
        "The full output is available in the event stream.]\n\n" + output[len(output) - max_chars :]
    )


def truncate_lines(output: str, max_lines: int) -> str:
    """Keep the first and last lines, ``max_lines`` in all, saying how many went."""
    lines = output.split("\n")
    if len(lines) <= max_lines:
        return output
    head_count = max_lines // 2
    tail_count = max_lines - head_count
    omitted = len(lines) - head_count - tail_count
    return (
        "\n".join(lines[:head_count])
        + f"\n[... {omitted} lines omitted ...]\n"
        + "\n".join(lines[len(lines) - tail_count :])
    )


def truncate_tool_output(
    output: str,
    tool_name: str,
    char_limits: Mapping[str, int] | None = None,
    line_limits: Mapping[str, int | None] | None = None,
) -> str:
    """The full pipeline: the tool's character limit first, then its line limit.

    ``char_limits`` and ``line_limits`` are the session's overrides; anything they
    do not name falls back to the spec's defaults.
    """
    max_chars = (char_limits or {}).get(tool_name) or DEFAULT_CHAR_LIMITS.get(
        tool_name, FALLBACK_CHAR_LIMIT
    )
    result = truncate_output(output, max_chars, DEFAULT_MODES.get(tool_name, "head_tail"))
    overrides = line_limits or {}
    max_lines = (
        overrides[tool_name] if tool_name in overrides else DEFAULT_LINE_LIMITS.get(tool_name)
    )
    if max_lines is not None:
        result = truncate_lines(result, max_lines)
    return result
