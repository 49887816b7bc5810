"""One way for a test to wait for what another task or process does.

Tests assert behaviour, not durations: a wait polls its condition until it holds
and fails with a clear message only past a generous hang guard.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import trio

from tests.environments.helpers import alive, running_in, survivors


def workers_per_cpu() -> float:
    """How many pytest-xdist workers share each CPU (at least 1): a hang guard set for
    a test that has a CPU of its own stretches by this much when it has less."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    return max(1.0, workers / (os.cpu_count() or 1))


HANG_GUARD = 30.0 * workers_per_cpu()
"""Seconds past which a wait is a hang, not a slow machine."""

TEST_KILL_GRACE = 0.3
"""SIGTERM to SIGKILL in tests (the runtime's ``kill_grace``; 2 s in production),
so a test that kills a command which traps SIGTERM does not wait 2 s for it."""

Condition = Callable[[], bool | Awaitable[bool]]


async def wait_until(
    condition: Condition, *, what: str = "the condition", interval: float = 0.02
) -> None:
    """Return once ``condition()`` (sync or async) is true; fail past the hang guard."""
    with trio.move_on_after(HANG_GUARD):
        while True:
            result = condition()
            if not isinstance(result, bool):
                result = await result if inspect.isawaitable(result) else bool(result)
            if result:
                return
            await trio.sleep(interval)
    raise AssertionError(f"gave up after {HANG_GUARD:g} s waiting for {what}")


async def wait_for_file(path: Path) -> None:
    """Until ``path`` exists (a marker a command writes)."""
    await wait_until(path.exists, what=f"{path} to be written")


async def wait_until_gone(pids: Iterable[int]) -> None:
    """Until none of ``pids`` runs any more (the kill ladder has ended them)."""
    watched = list(pids)
    await wait_until(lambda: not alive(watched), what=f"processes {watched} to end", interval=0.05)


async def wait_until_no_survivors(marker: str) -> None:
    """Until no process whose command line holds ``marker`` runs any more."""
    await wait_until(lambda: not survivors(marker), what=f"every process of {marker} to end")


async def wait_until_nothing_runs_in(directory: Path) -> None:
    """Until no process works in ``directory`` any more (a session's commands,
    found on the host whatever PID namespace they saw)."""
    await wait_until(lambda: not running_in(directory), what=f"every process in {directory} to end")
