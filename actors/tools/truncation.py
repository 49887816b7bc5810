"""Tool output truncation (coding-agent-loop-spec §5), characters first, then lines.

Character truncation always runs first: it is the only safeguard against a file of
two 10 MB lines. The marker texts are the spec's, so the model is told that output
was cut, how much, and that the full output is in the event stream.
"""

from __future__ import annotations

from collections.abc import Mapping

from actors.tools.builtin import builtin_tool
from actors.tools.tool import DEFAULT_LIMITS, OutputLimits, Tool, TruncationMode

__all__ = ["OutputLimits", "TruncationMode", "limits_of", "truncate_tool_output"]


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


def limits_of(tool: Tool | str) -> OutputLimits:
    """The tool's declared limits; for a bare name, those of Troupe's own tool of
    that name, else the defaults."""
    if isinstance(tool, Tool):
        return tool.limits
    found = builtin_tool(tool)
    return found.limits if found is not None else DEFAULT_LIMITS


def truncate_tool_output(
    output: str,
    tool: Tool | str,
    char_limits: Mapping[str, int] | None = None,
    line_limits: Mapping[str, int | None] | None = None,
) -> str:
    """The full pipeline: the tool's character limit first, then its line limit.

    ``char_limits`` and ``line_limits`` are the session's overrides, by tool name;
    anything they do not name falls back to what the tool declares
    (:class:`~actors.tools.tool.OutputLimits`).
    """
    limits = limits_of(tool)
    name = tool.name if isinstance(tool, Tool) else tool
    max_chars = (char_limits or {}).get(name) or limits.chars
    result = truncate_output(output, max_chars, limits.mode)
    max_lines = (line_limits or {}).get(name, limits.lines)
    if max_lines is not None:
        result = truncate_lines(result, max_lines)
    return result
