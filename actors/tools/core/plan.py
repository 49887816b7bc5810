"""``update_plan``: the model keeps a short step list, as codex's tool of that name.

The tool does nothing but accept the plan: the plan's value is in the call itself,
which every client sees as a tool call event (an editor over ACP shows it as the
agent's plan, see :mod:`actors.acp.updates`)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from actors.tools.registry import Tool

PlanStatus = Literal["pending", "in_progress", "completed"]


class PlanStep(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    step: str
    status: PlanStatus


class UpdatePlanParams(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    plan: list[PlanStep]
    explanation: str | None = None


async def update_plan(arguments: UpdatePlanParams, context: Any) -> str:
    return "Plan updated"


UPDATE_PLAN = Tool(
    name="update_plan",
    description=(
        "Keep the task's plan up to date: a short list of steps, each pending, "
        "in_progress or completed (at most one in_progress). Send the whole list "
        "each time; say why it changed in `explanation`."
    ),
    execute=update_plan,
    parameters=UpdatePlanParams,
    category="read",
    hook_names=("TodoWrite",),
)
