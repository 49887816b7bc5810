"""The limits an input stops at, checked before each model call, and
``extend_limit``, which raises the one it stopped at so the input can go on.

Token budgets (:mod:`actors.session.token_budget`), the agentic loop's
iterations (:mod:`actors.session.agentic_mode`), tool rounds per input and model
turns per session: the first one reached ends the input with its message and a
``turn_limit`` event. In agentic mode its iteration limit takes the place of the
tool rounds per input (the agentic preset sets both to 25, and entering the mode
takes a round of its own).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from actors.kernel import Rejection
from actors.session.agentic_mode import AgenticMode
from actors.session.cost_ledger import CostLedger, cost_stop_message
from actors.session.events import EventHub
from actors.session.round_checks import ITERATION_LIMIT_MESSAGE
from actors.session.token_budget import TokenBudget
from protocol.events import TurnLimitEvent
from protocol.session import SessionConfig

LimitName = Literal[
    "max_tool_rounds_per_input",
    "max_turns",
    "agentic_max_iterations",
    "input_token_budget",
    "session_token_budget",
    "max_input_cost",
    "max_cost",
]
"""The settings an input can stop at, which ``extend_limit`` raises."""


class NothingToExtend(Rejection):
    """``ExtendLimit`` while the last input did not stop at a limit (or still runs)."""

    code = "invalid_request"


class InputLimits:
    """Which limit, if any, the current (or last) input stopped at."""

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self.hit: LimitName | None = None

    def check(
        self,
        config: SessionConfig,
        rounds: int,
        model_turns: int,
        agentic: AgenticMode,
        budget: TokenBudget,
        last_text: str,
        cost: CostLedger | None = None,
    ) -> str | None:
        """Before a model call: the text the input ends with when a limit is
        reached (its event emitted), else None."""
        exceeded = budget.exceeded(config)
        if exceeded is not None:
            self.hit = exceeded.name
            self.hub.emit(TurnLimitEvent(exceeded.name, tokens_used=exceeded.used))
            return exceeded.message
        capped = cost.exceeded(config) if cost is not None else None
        if capped is not None:
            name, used, cap = capped
            self.hit = name
            self.hub.emit(TurnLimitEvent(name, cost_usd=used))
            return cost_stop_message(name, used, cap)
        if agentic.limit_reached(config.agentic_max_iterations):
            self.hit = "agentic_max_iterations"
            self.hub.emit(TurnLimitEvent(self.hit, round=agentic.iterations))
            return agentic.stop_at_limit(last_text)
        rounds_limit = 0 if agentic.active else config.max_tool_rounds_per_input
        if rounds_limit and rounds >= rounds_limit:
            self.hit = "max_tool_rounds_per_input"
            self.hub.emit(TurnLimitEvent(self.hit, round=rounds))
        elif config.max_turns and model_turns >= config.max_turns:
            self.hit = "max_turns"
            self.hub.emit(TurnLimitEvent(self.hit, total_turns=model_turns))
        else:
            return None
        return ITERATION_LIMIT_MESSAGE

    def extend(self, config: SessionConfig, by: int, idle: bool) -> SessionConfig:
        """``config`` with the limit the last input stopped at raised by ``by``."""
        if by <= 0:
            raise NothingToExtend(f"extend_limit needs a positive amount, not {by}")
        if not idle or self.hit is None:
            raise NothingToExtend("the last input did not stop at an iteration limit")
        limit, self.hit = self.hit, None
        if limit in ("max_input_cost", "max_cost") and not getattr(config, limit):
            raise NothingToExtend(f"{limit} was a parent session's cap: raise it there")
        return msgspec.structs.replace(config, **{limit: getattr(config, limit) + by})
