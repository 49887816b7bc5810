"""Running one round's tool calls: all at once or in turn, results in call order.

How one call runs is the caller's (a handler for the client layer; the policy,
hooks, events and environment for a session); this is only the round around it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import trio

from actors.rounds.observers import observers
from protocol.llm import ToolCall, ToolResult

T = TypeVar("T")


async def run_calls(
    calls: Sequence[ToolCall],
    run: Callable[[ToolCall], Awaitable[T]],
    parallel: bool,
) -> list[T]:
    """Run each call with ``run``, all at once when ``parallel``; results in call order."""
    if not parallel or len(calls) < 2:
        return [await run(call) for call in calls]
    outcomes: list[T | None] = [None] * len(calls)

    async def run_one(index: int, call: ToolCall) -> None:
        outcomes[index] = await run(call)

    async with trio.open_nursery() as nursery:
        for index, call in enumerate(calls):
            nursery.start_soon(run_one, index, call)
    return [outcome for outcome in outcomes if outcome is not None]


async def run_round(
    calls: Sequence[ToolCall],
    run: Callable[[ToolCall], Awaitable[ToolResult]],
    parallel: bool,
    cut_short: Callable[[Sequence[ToolCall]], None] | None = None,
) -> list[ToolResult]:
    """One round, told to the observers. When it is cancelled, ``cut_short`` hears
    of its calls before the cancellation goes on: every call must keep an answer,
    or the next request would carry tool calls without results (providers refuse)."""
    watching = observers()
    for observer in watching:
        observer.round_started(calls)
    try:
        results = await run_calls(calls, run, parallel)
    except trio.Cancelled:
        if cut_short is not None:
            cut_short(calls)
        raise
    for observer in watching:
        observer.round_ended(calls, results)
    return results
