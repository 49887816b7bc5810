"""Token budgets per input and per session (forge-agent-loop-prd FR5,
agentic-behavior-tool.md 9.1), counted from the usage the model reports.

Each model call spends its input tokens (the whole request, as billed, cached
input included) plus its output tokens. Near a budget (``token_budget_warning_ratio``)
the user and the model are warned once; at or past it the input stops before
its next model call, so every tool call the last answer made still gets its
result. Pure bookkeeping: the loop emits the events and ends the input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from actors.provider_wires import of_provider
from protocol.llm import Usage
from protocol.session import AssistantTurn, SessionConfig, Turn

BudgetName = Literal["input_token_budget", "session_token_budget"]

_SCOPE: dict[BudgetName, str] = {
    "input_token_budget": "this request",
    "session_token_budget": "this session",
}


def tokens_spent(usage: Usage, provider: str | None = None) -> int:
    """Tokens one model call spent. Anthropic counts cached input apart from
    ``input_tokens``; the other providers count it inside."""
    cached = (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
    wire = of_provider(provider)
    apart = wire is not None and wire.cached_input_apart
    return usage.input_tokens + usage.output_tokens + (cached if apart else 0)


def budget_warning(name: BudgetName, used: int, budget: int) -> str:
    return (
        f"Token budget: {used:,} of {budget:,} tokens used for {_SCOPE[name]}. "
        "Finish the most important part now and keep answers short."
    )


def budget_stop_message(name: BudgetName, used: int, budget: int) -> str:
    return f"Stopped: token budget exceeded ({used:,} of {budget:,} tokens for {_SCOPE[name]})."


class Exceeded(msgspec.Struct, frozen=True):
    """The budget an input stopped at, and how far it went."""

    name: BudgetName
    used: int
    budget: int

    @property
    def message(self) -> str:
        return budget_stop_message(self.name, self.used, self.budget)


class TokenBudget:
    """Tokens spent this input and this session, and which warnings were given."""

    def __init__(self, history: Iterable[Turn] = ()) -> None:
        """A resumed session's earlier answers count against the session budget."""
        self.session_used = sum(
            tokens_spent(turn.usage) for turn in history if isinstance(turn, AssistantTurn)
        )
        self.input_used = 0
        self._warned: set[BudgetName] = set()

    def new_input(self) -> None:
        self.input_used = 0
        self._warned.discard("input_token_budget")

    def record(self, usage: Usage, provider: str | None, config: SessionConfig) -> list[str]:
        """Count one model call; the warnings now due (each budget warns once)."""
        spent = tokens_spent(usage, provider)
        self.input_used += spent
        self.session_used += spent
        warnings: list[str] = []
        for name, used, budget in self._budgets(config):
            threshold = budget * config.token_budget_warning_ratio
            if name not in self._warned and config.token_budget_warning_ratio and used >= threshold:
                self._warned.add(name)
                warnings.append(budget_warning(name, used, budget))
        return warnings

    def exceeded(self, config: SessionConfig) -> Exceeded | None:
        """The first budget used up, before the next model call."""
        for name, used, budget in self._budgets(config):
            if used >= budget:
                return Exceeded(name, used, budget)
        return None

    def _budgets(self, config: SessionConfig) -> list[tuple[BudgetName, int, int]]:
        budgets: list[tuple[BudgetName, int, int]] = []
        if config.input_token_budget:
            budgets.append(("input_token_budget", self.input_used, config.input_token_budget))
        if config.session_token_budget:
            budgets.append(("session_token_budget", self.session_used, config.session_token_budget))
        return budgets
