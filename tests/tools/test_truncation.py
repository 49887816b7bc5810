"""Truncation per coding-agent-loop-spec §5: exact markers, characters before lines."""

from __future__ import annotations

from actors.tools.truncation import truncate_lines, truncate_output, truncate_tool_output


def test_short_output_is_untouched() -> None:
    assert truncate_output("hello", 10, "head_tail") == "hello"
    assert truncate_tool_output("a\nb", "shell") == "a\nb"


def test_head_tail_keeps_both_ends_with_the_exact_marker() -> None:
    output = "A" * 60 + "B" * 40
    cut = truncate_output(output, 20, "head_tail")
    assert cut == (
        "A" * 10 + "\n\n[WARNING: Tool output was truncated. 80 characters were removed from the "
        "middle. The full output is available in the event stream. If you need to see "
        "specific parts, re-run the tool with more targeted parameters.]\n\n" + "B" * 10
    )


def test_tail_keeps_the_end_with_the_exact_marker() -> None:
    cut = truncate_output("0123456789" * 3, 5, "tail")
    assert cut == (
        "[WARNING: Tool output was truncated. First 25 characters were removed. "
        "The full output is available in the event stream.]\n\n56789"
    )


def test_line_truncation_marker() -> None:
    text = "\n".join(str(n) for n in range(10))
    assert truncate_lines(text, 4) == "0\n1\n[... 6 lines omitted ...]\n8\n9"


def test_characters_are_cut_before_lines_so_two_huge_lines_cannot_pass() -> None:
    huge = "x" * 10_000_000 + "\n" + "y" * 10_000_000
    cut = truncate_tool_output(huge, "shell")
    assert len(cut) < 31_000
    assert cut.startswith("x" * 15_000) and cut.endswith("y" * 15_000)


def test_shell_default_line_limit_applies_after_characters() -> None:
    output = "\n".join(f"line {n}" for n in range(1000))
    cut = truncate_tool_output(output, "shell")
    assert cut.count("\n") == 256
    assert "[... 744 lines omitted ...]" in cut


def test_session_overrides_win_over_defaults() -> None:
    output = "z" * 5_000
    assert truncate_tool_output(output, "write_file") != output
    assert truncate_tool_output(output, "write_file", char_limits={"write_file": 10_000}) == output
    many = "\n".join("l" for _ in range(300))
    assert truncate_tool_output(many, "shell", line_limits={"shell": None}) == many
