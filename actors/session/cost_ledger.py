"""The cost ledger: what a session's model calls spent, in tokens and dollars, its
subagents' included, and the dollar caps (``max_input_cost``, ``max_cost``).

Every model call (the loop's, and a compaction's summary) is counted at the model
catalog's list prices, cache reads and writes at their own. A subagent's ledger
has its parent's as ``parent``: what it spends is added to each ledger above it,
under its agent id, so a parent's cap counts its subagents' spend as it happens,
and a subagent stops as soon as any ledger above it is past its cap.

The caps act like the token budgets (:mod:`actors.session.token_budget`): warned
once at ``token_budget_warning_ratio``, the input stops before its next model
call once past, and ``extend_limit`` raises the cap it stopped at (by whole
dollars). A resumed session counts its stored history's calls again (at the
session's model's prices).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal

import msgspec

from actors.models.client.catalog import usage_cost
from protocol.llm import Usage
from protocol.session import AssistantTurn, CompactionTurn, RewindTurn, SessionConfig, Spend, Turn

CapName = Literal["max_input_cost", "max_cost"]

_SCOPE: dict[CapName, str] = {"max_input_cost": "this request", "max_cost": "this session"}


def call_cost(usage: Usage, *models: str | None) -> float | None:
    """Dollars for one call: the first of ``models`` the catalog has a price for."""
    for model in models:
        if model:
            cost = usage_cost(model, usage)
            if cost is not None:
                return cost
    return None


def cost_warning(name: CapName, used: float, cap: float) -> str:
    return (
        f"Cost cap: ${used:.4f} of ${cap:.2f} spent for {_SCOPE[name]}. "
        "Finish the most important part now and keep answers short."
    )


def cost_stop_message(name: CapName, used: float, cap: float) -> str:
    return f"Stopped: cost cap reached (${used:.4f} of ${cap:.2f} for {_SCOPE[name]})."


class CostLedger:
    """One session's spend: its own calls, and each subagent's (subtree) total."""

    def __init__(self, history: Iterable[Turn] = (), model: str | None = None) -> None:
        self.own = Spend()
        self.subagents: dict[str, Spend] = {}
        self.input_cost = 0.0
        """Dollars spent since the current input began (subagents' included)."""
        self.parent: CostLedger | None = None
        self.agent_id = ""
        self.caps: tuple[float, float] = (0.0, 0.0)
        """(max_input_cost, max_cost) as last checked: what a subagent checks against."""
        self._warned: set[CapName] = set()
        for turn in history:
            usage = (
                turn.usage
                if isinstance(turn, AssistantTurn | CompactionTurn | RewindTurn)
                else None
            )
            if usage is not None:
                self.own += Spend.of(usage, call_cost(usage, model))

    def carry_over(self, stored: Spend) -> None:
        """A resumed session's stored ledger: what it holds beyond the calls in the
        history (its subagents', before the restart) is kept under ``earlier``."""
        extra = Spend(*(max(a - b, 0) for a, b in zip(
            msgspec.structs.astuple(stored), msgspec.structs.astuple(self.total), strict=True
        )))  # fmt: skip
        if extra.calls or extra.cost_usd:
            self.subagents["earlier"] = extra

    def attach(self, parent: CostLedger, agent_id: str) -> None:
        """This ledger is a subagent's: spend counts in ``parent`` too."""
        self.parent, self.agent_id = parent, agent_id

    @property
    def total(self) -> Spend:
        total = self.own
        for spend in self.subagents.values():
            total += spend
        return total

    def new_input(self) -> None:
        self.input_cost = 0.0
        self._warned.discard("max_input_cost")

    def record(self, usage: Usage, *models: str | None) -> Spend:
        """Count one model call of this session; its spend."""
        spend = Spend.of(usage, call_cost(usage, *models))
        self.own += spend
        self.input_cost += spend.cost_usd
        if self.parent is not None:
            self.parent._from_subagent(self.agent_id, spend)
        return spend

    def _from_subagent(self, agent_id: str, spend: Spend) -> None:
        self.subagents[agent_id] = self.subagents.get(agent_id, Spend()) + spend
        self.input_cost += spend.cost_usd
        if self.parent is not None:
            self.parent._from_subagent(self.agent_id, spend)

    def _chain(self) -> Iterator[CostLedger]:
        ledger: CostLedger | None = self
        while ledger is not None:
            yield ledger
            ledger = ledger.parent

    def _caps(self) -> list[tuple[CapName, float, float]]:
        input_cap, session_cap = self.caps
        found: list[tuple[CapName, float, float]] = []
        if input_cap:
            found.append(("max_input_cost", self.input_cost, input_cap))
        if session_cap:
            found.append(("max_cost", self.total.cost_usd, session_cap))
        return found

    def warnings(self, config: SessionConfig) -> list[str]:
        """The cap warnings now due (each cap warns once)."""
        self.caps = (config.max_input_cost, config.max_cost)
        ratio = config.token_budget_warning_ratio
        due: list[str] = []
        for name, used, cap in self._caps():
            if ratio and name not in self._warned and used >= cap * ratio:
                self._warned.add(name)
                due.append(cost_warning(name, used, cap))
        return due

    def exceeded(self, config: SessionConfig) -> tuple[CapName, float, float] | None:
        """The first cap reached, this session's or a parent's (name, used, cap)."""
        self.caps = (config.max_input_cost, config.max_cost)
        for ledger in self._chain():
            for name, used, cap in ledger._caps():
                if used >= cap:
                    return name, used, cap
        return None
