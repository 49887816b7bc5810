"""The loop of rounds: one model call, then (when the host wants it) one round of
the tools it called, then what the host does between rounds; again until the host
stops.

The engine is a pull-driven async generator: what the host's model call yields
(stream events, for ``stream()``) and what it says between rounds (a
``StepFinish``) pass through to whoever iterates, and there is no background
task, so cancelling the pull that waits cancels the model call or the round.
Users that want nothing passed through (``generate()``, the session, whose model
call reports to its own event hub) just drain it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Final, Literal, Protocol, TypeVar

import msgspec

from actors.rounds.calls import run_round
from protocol.llm import Response, ToolCall, ToolResult

E = TypeVar("E")
E_co = TypeVar("E_co", covariant=True)

Move = Literal["run_tools", "ask_again", "stop"]
"""After an answer: run its tool calls as a round, ask the model again without a
round (a session's nudge to go on), or stop."""


class Answer(msgspec.Struct, frozen=True):
    """The last item of a model call: the whole answer."""

    response: Response


class Stop:
    """What ``after_round`` returns to end the rounds (:data:`STOP`)."""


STOP: Final = Stop()


class RoundHost(Protocol[E_co]):
    """What a user of the engine brings: its model call, its way to run one call,
    and its decisions before a call, after an answer and after a round."""

    @property
    def parallel(self) -> bool:
        """Whether a round's calls run at once (results stay in call order)."""
        ...

    def may_ask(self, rounds: int) -> bool:
        """Before each model call, with the rounds run so far: False stops here."""
        ...

    def ask(self) -> AsyncGenerator[E_co | Answer, None]:
        """One model call: what to pass through, then its :class:`Answer`; ending
        without one stops the rounds (the host has recorded why)."""
        ...

    async def next_move(self, response: Response, rounds: int) -> Move:
        """The answer is in (``rounds`` run so far): what comes next."""
        ...

    async def run_call(self, call: ToolCall) -> ToolResult:
        """One tool call of a round; its failures are its result, never raised."""
        ...

    def cut_short(self, calls: Sequence[ToolCall]) -> None:
        """The round was cancelled before all its results were in."""
        ...

    async def after_round(
        self, response: Response, results: list[ToolResult], rounds: int
    ) -> E_co | Stop | None:
        """The round's results are in (``rounds`` counts it): :data:`STOP` ends the
        rounds; anything else but None is passed through before the next call."""
        ...


async def run_rounds(host: RoundHost[E], rounds: int = 0) -> AsyncGenerator[E, None]:
    """Rounds until the host stops them; ``rounds`` continues a count (an input
    continued past its limit, a round finished after a restart)."""
    while host.may_ask(rounds):
        response: Response | None = None
        async with aclosing(host.ask()) as items:
            async for item in items:
                if isinstance(item, Answer):
                    response = item.response
                else:
                    yield item
        if response is None:
            return
        move = await host.next_move(response, rounds)
        if move == "stop":
            return
        if move == "ask_again":
            continue
        rounds += 1
        results = await run_round(response.tool_calls, host.run_call, host.parallel, host.cut_short)
        after = await host.after_round(response, results, rounds)
        if isinstance(after, Stop):
            return
        if after is not None:
            yield after
