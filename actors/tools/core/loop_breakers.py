"""Loop-breaking tools (forge-agent-loop-prd FR6): ``task_completion``,
``ask_question`` and ``converse``.

Calling one ends the loop at once: its content is what the user is shown (the
session's output for this input), and no further model call is made.
``ask_question`` also leaves the session awaiting input, so the next user input
is its answer. The tools only echo their content; stopping is the loop's job
(:mod:`actors.session.loop`), which recognises them by name.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.registry import Tool


class TaskCompletionParams(msgspec.Struct, frozen=True):
    summary: Annotated[str, msgspec.Meta(description="What was done, for the user")]


class AskQuestionParams(msgspec.Struct, frozen=True):
    question: Annotated[str, msgspec.Meta(description="The question the user must answer")]


class ConverseParams(msgspec.Struct, frozen=True):
    message: Annotated[str, msgspec.Meta(description="The reply to show the user")]


async def _task_completion(arguments: TaskCompletionParams, context: ToolContext) -> str:
    return arguments.summary


async def _ask_question(arguments: AskQuestionParams, context: ToolContext) -> str:
    return arguments.question


async def _converse(arguments: ConverseParams, context: ToolContext) -> str:
    return arguments.message


TASK_COMPLETION = Tool(
    "task_completion",
    "Call when the task is finished: ends the loop and shows the summary to the user.",
    _task_completion,
    TaskCompletionParams,
)
ASK_QUESTION = Tool(
    "ask_question",
    "Call when you need information only the user has: ends the loop, shows the "
    "question, and the user's next message is the answer.",
    _ask_question,
    AskQuestionParams,
)
CONVERSE = Tool(
    "converse",
    "Call to reply conversationally when no work is needed: ends the loop.",
    _converse,
    ConverseParams,
)
LOOP_BREAKING_TOOLS = (TASK_COMPLETION, ASK_QUESTION, CONVERSE)
LOOP_BREAKING_NAMES = frozenset(tool.name for tool in LOOP_BREAKING_TOOLS)
AWAITS_ANSWER = frozenset({ASK_QUESTION.name})
"""Loop-breakers after which the session waits for the user's answer."""
