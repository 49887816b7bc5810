"""What model calls cost, as a session, its list and its result report it.

Apart from :mod:`protocol.session` (which re-exports it) because ``troupe sessions``
reads each stored session's ledger and needs this Struct alone, not the session's
configuration types and the LLM messages under them (issue #36)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from protocol.llm import Usage


class Spend(msgspec.Struct, frozen=True):
    """What model calls cost: tokens by kind and dollars at the model catalog's list
    prices (cache reads and writes at theirs). ``unpriced_calls`` counts calls of a
    model the catalog has no price for: ``cost_usd`` leaves them out."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @classmethod
    def of(cls, usage: Usage, cost_usd: float | None) -> Spend:
        """One model call's spend."""
        return cls(
            1, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens or 0,
            usage.cache_write_tokens or 0, usage.reasoning_tokens or 0, cost_usd or 0.0,
            int(cost_usd is None),
        )  # fmt: skip

    def __add__(self, other: Spend) -> Spend:
        pairs = zip(msgspec.structs.astuple(self), msgspec.structs.astuple(other), strict=True)
        return Spend(*(a + b for a, b in pairs))
