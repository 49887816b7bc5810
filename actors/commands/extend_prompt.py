"""The question ``troupe run`` asks at a terminal when an input stops at a limit
(agent-loop-and-tool-system S5.7: the user can extend the limit and continue the
same input), and reading the answer: yes, a number, or anything else for no."""

from __future__ import annotations

EXTEND_BY = 20
"""Turns, tool rounds or agentic iterations a plain "yes" adds."""
EXTEND_TOKENS_BY = 50_000
"""Tokens a plain "yes" adds to a token budget."""
EXTEND_DOLLARS_BY = 1
"""Dollars a plain "yes" adds to a cost cap (``max_cost``, ``max_input_cost``)."""


def default_amount(limit: str) -> int:
    if limit.endswith("_cost"):
        return EXTEND_DOLLARS_BY
    return EXTEND_TOKENS_BY if limit.endswith("token_budget") else EXTEND_BY


def extend_question(limit: str) -> str:
    unit = "$" if limit.endswith("_cost") else ""
    return (
        f"[{limit} reached] extend it by {unit}{default_amount(limit):,} and continue? "
        "(yes, a number to add, or no)"
    )


def extend_amount(line: str, limit: str) -> int | None:
    """How much to add for the typed answer; None: do not extend."""
    answer = line.strip().lower().replace(",", "").replace("_", "")
    if answer in ("y", "yes"):
        return default_amount(limit)
    if answer.isdigit() and int(answer) > 0:
        return int(answer)
    return None
