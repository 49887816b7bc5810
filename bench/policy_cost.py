"""The policy's cost per tool call: the registry running a call with the session's
policy gate against the same call with no gate, in the same run.

Both sides run the same trivial tool, alternate, are warmed alike and repeated;
the figure is the difference of the per-call times (min and median over the
repeats). The shell call is classified by the real lexer (``ls | grep && git``);
the noop call is a declared read tool. No approval is needed, so what is measured
is the decision and its audit event, which every allowed call pays.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import trio

from actors.session.approvals import Approvals
from actors.session.events import EventHub
from actors.session.policy_gate import PolicyGate
from actors.tools.registry import Tool, ToolRegistry
from protocol.llm import ToolCall
from protocol.session import SessionConfig

SHELL_LINE = "ls -la src | grep -v test && git status --short"


async def _nothing(arguments: Any, context: Any) -> str:
    return "ok"


def _tools() -> ToolRegistry:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    return ToolRegistry(
        [
            Tool("noop", "Do nothing.", _nothing, json_schema={"type": "object"}, category="read"),
            Tool("shell", "Pretend to run.", _nothing, json_schema=schema, category="write"),
        ]
    )


async def _per_call_us(
    registry: ToolRegistry, call: ToolCall | list[ToolCall], calls: int, gate: Any
) -> float:
    """Microseconds per call; a list of calls is run in turn (distinct lines)."""
    each = call if isinstance(call, list) else [call] * calls
    started = time.perf_counter()
    for one in each[:calls]:
        await registry.run(one, None, gate)
    return (time.perf_counter() - started) / calls * 1e6


def _fresh_lines(count: int, salt: int) -> list[ToolCall]:
    """Shell calls that each carry a line never classified before (the
    classifier remembers repeated lines, so this is the cost of a new one)."""
    return [
        ToolCall(f"f{salt}-{n}", "shell", {"command": f"{SHELL_LINE} {salt}-{n}"})
        for n in range(count)
    ]


async def measure(calls: int = 300, repeats: int = 9) -> dict[str, tuple[float, float]]:
    """``{call kind: (min, median) microseconds the policy adds per call}``."""
    registry = _tools()
    hub = EventHub("bench")
    policy_gate = PolicyGate(hub, Approvals(hub.emit), "/tmp")
    config = SessionConfig()

    async def gate(tool: Tool, call: ToolCall) -> str | None:
        return await policy_gate.refusal(call, tool.category, config)

    kinds: dict[str, Any] = {
        "noop": lambda _: ToolCall("c1", "noop", {}),
        "shell": lambda _: ToolCall("c2", "shell", {"command": SHELL_LINE}),
        "shell_new_line": lambda salt: _fresh_lines(calls, salt),
    }
    figures: dict[str, tuple[float, float]] = {}
    for kind, make in kinds.items():
        await _per_call_us(registry, make(-1), calls, None)  # warm both alike
        await _per_call_us(registry, make(-2), calls, gate)
        added: list[float] = []
        for repeat in range(repeats):
            call = make(repeat)
            if repeat % 2:
                with_gate = await _per_call_us(registry, call, calls, gate)
                without = await _per_call_us(registry, call, calls, None)
            else:
                without = await _per_call_us(registry, call, calls, None)
                with_gate = await _per_call_us(registry, call, calls, gate)
            added.append(with_gate - without)
        figures[kind] = (min(added), statistics.median(added))
    return figures


if __name__ == "__main__":
    for kind, (low, middle) in trio.run(measure).items():
        print(f"{kind}: +{low:.1f} us min, +{middle:.1f} us median per call")
