"""Agentic mode's two tools (agentic-behavior-tool.md 2.3, 2.4).

``enter_agentic_mode(user_prompt, objective)`` is how the model decides, by
itself, that a request needs many steps; ``complete(result, status)`` ends that
loop and its ``result`` is what the user is shown. Like the loop-breaking tools,
they only echo their arguments: entering, tracking and ending agentic mode is the
loop's job (:mod:`actors.session.agentic_mode`), which knows them by name.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.registry import Tool
from protocol.session import CompletionStatus


class EnterAgenticParams(msgspec.Struct, frozen=True):
    user_prompt: Annotated[str, msgspec.Meta(description="The user's request, as they wrote it")]
    objective: Annotated[
        str, msgspec.Meta(description="Your own statement of the goal you will pursue")
    ]


class CompleteParams(msgspec.Struct, frozen=True):
    result: Annotated[str, msgspec.Meta(description="What was accomplished, for the user")]
    status: Annotated[
        CompletionStatus,
        msgspec.Meta(description="success, failure (impossible), or partial"),
    ]


async def _enter(arguments: EnterAgenticParams, context: ToolContext) -> str:
    return (
        f"Agentic mode started. Objective: {arguments.objective}\n"
        "Keep working with tools; call complete(result, status) when the objective "
        "is met or cannot be met."
    )


async def _complete(arguments: CompleteParams, context: ToolContext) -> str:
    return arguments.result


ENTER_AGENTIC_MODE = Tool(
    "enter_agentic_mode",
    "Call when the request needs several steps of autonomous work: you then keep "
    "working with tools, without the user, until you call complete(result, status).",
    _enter,
    EnterAgenticParams,
    category="read",
    agentic="enters",
)
COMPLETE = Tool(
    "complete",
    "Call when the agentic objective is met (success), cannot be met (failure) or "
    "is only partly met (partial): ends the loop and shows result to the user.",
    _complete,
    CompleteParams,
    category="read",
    agentic="completes",
)
AGENTIC_TOOLS = (ENTER_AGENTIC_MODE, COMPLETE)
