"""Compaction: keeping a long conversation inside the model's context window.

Before each request the loop asks :meth:`Compactor.before_request`; when the
request would fill more than ``compaction_threshold`` of the window (and the
setting is ``auto``), the conversation is compacted in two steps:

1. **prune**: tool outputs older than the last ``compaction_keep_rounds`` rounds
   become one-line stubs naming the call and the size elided;
2. **summarize**, if still over: the turns between the first user input and the
   last ``compaction_keep_turns`` answers are summarized by the model with a
   prompt that keeps goals, decisions, files touched and open problems (and the
   user's instructions, for a manual ``compact``); the latest user input in that
   range stays verbatim after the summary.

Each step appends one :class:`~protocol.session.CompactionTurn` to the history:
durable like every turn, and all :mod:`actors.session.context_view` needs to
rebuild the same messages after a restart, without the model. A provider's
context-overflow error makes the loop compact once (:meth:`Compactor.compact`
with ``reason="overflow"``) and retry the request.

Every compaction, automatic or asked for, begins in :meth:`Compactor.begin`: the
one place a PreCompact hook belongs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from actors.models.client.catalog import get_model_info
from actors.models.errors import ModelError
from actors.models.fallback import FallbackModel
from actors.models.session import ModelSession
from actors.session.context_view import (
    ContextView,
    first_input_end,
    shown_turns,
)
from actors.session.cost_ledger import CostLedger
from actors.session.events import EventHub
from actors.session.history import history_chars
from actors.session.profiles import ProviderProfile
from actors.session.token_budget import tokens_spent
from actors.session.turns import TurnLog
from protocol.events import CompactionEndEvent, CompactionStartEvent, WarningEvent
from protocol.llm import Message, Request, Usage
from protocol.session import (
    AssistantTurn,
    CompactionOutcome,
    CompactionTurn,
    RewindTurn,
    SessionConfig,
    SteeringTurn,
    SystemTurn,
    ToolResultsTurn,
    Turn,
    UserTurn,
)

if TYPE_CHECKING:
    from actors.hooks import SessionHooks

COMPACTION_PROMPT = """\
You are compacting the history of a coding agent's session so that the agent can
go on with its work in a smaller context. You are given the part of the conversation
to replace. Write a summary the agent will read instead of it. Keep, precisely:

- the user's goals and requests, and any constraints they gave;
- decisions made and why; approaches tried that failed, and why;
- every file created, read, changed or deleted, with what matters about it;
- commands run that matter and their outcome (tests passing or failing, errors);
- open problems, unfinished steps and what the agent meant to do next.

Be concrete (names, paths, values, error messages). Do not invent anything. Answer
with the summary only, in plain text."""

TRANSCRIPT_MARKER = "Conversation to summarize:"
"""The start of the summary request's user message (a scripted provider matches it)."""
TARGET = 0.7
"""A compaction for the threshold aims below this share of it (pruning alone must
get there, else the older turns are summarized), so it is not needed again at once."""
TOOL_OUTPUT_CHARS = 2000
"""Each tool output in the transcript is cut to this many characters."""


def context_window(profile: ProviderProfile, config: SessionConfig, model: str) -> int:
    """The window: configured, else the model catalog's, else the profile's."""
    if config.context_window > 0:
        return config.context_window
    info = get_model_info(model)
    return info.context_window if info is not None else profile.context_window_size


class Compactor:
    """Decides when to compact, and compacts; owns nothing but its estimates."""

    def __init__(
        self,
        profile: ProviderProfile,
        hub: EventHub,
        history: TurnLog,
        view: ContextView,
        cost: CostLedger | None = None,
    ) -> None:
        self.profile = profile
        self.cost = cost
        self.hub = hub
        self.history = history
        self.view = view
        self.hooks: SessionHooks | None = None
        """The session's hooks (PreCompact), when it has any."""
        self.durable: Callable[[], Awaitable[None]] | None = None
        """The loop's barrier (:attr:`AgenticLoop.durable`), awaited before the
        summary's model call as before any other."""
        self._reported: int | None = None
        """Tokens the provider counted for the last request and answer."""
        self._chars_at_report = 0
        self._chars_sent = 0
        self._generation_at_report = 0
        self._overhead_chars = 0
        self._overhead_key: tuple[int, tuple[str, ...]] = (0, ())
        self._ratio = 1.0
        """The provider's tokens over the ~4-characters estimate, as last measured."""

    # -- estimates -----------------------------------------------------------

    def sent(self, request: Request) -> None:
        """The loop sent ``request`` (built from the view as it is now)."""
        self._chars_sent = self.view.chars
        system = request.messages[0].text if request.messages else ""
        key = (len(system), tuple(tool.name for tool in request.tools))
        if key != self._overhead_key:  # the tools' schemas are encoded once, not each round
            self._overhead_key = key
            self._overhead_chars = len(system) + sum(
                len(tool.name) + len(tool.description) + len(msgspec.json.encode(tool.parameters))
                for tool in request.tools
            )

    def answered(self, usage: Usage, provider: str | None, answer: Turn) -> None:
        """The provider's count for the request just sent, and its answer."""
        spent = tokens_spent(usage, provider)
        self._reported = spent if spent > 0 else None
        self._chars_at_report = self._chars_sent + history_chars((answer,))
        self._generation_at_report = self.view.generation
        if self._reported is not None:
            estimate = (self._overhead_chars + self._chars_at_report) / 4
            self._ratio = max(1.0, min(self._reported / estimate, 4.0)) if estimate else 1.0

    def tokens(self) -> int:
        """The next request's size in tokens: the provider's count for the last one
        plus ~4 characters a token for what was added since; after a compaction (or
        before any answer), ~4 characters a token for the whole of it."""
        self.view.messages(self.history)
        stale = self.view.generation != self._generation_at_report
        if self._reported is not None and not stale:
            return self._reported + (self.view.chars - self._chars_at_report) // 4
        return self._estimate(self.view.chars)

    def _estimate(self, chars: int) -> int:
        return int((self._overhead_chars + chars) / 4 * self._ratio)

    # -- deciding ------------------------------------------------------------

    def over_threshold(self, config: SessionConfig, model: str, share: float = 1.0) -> bool:
        window = context_window(self.profile, config, model)
        return self.tokens() > window * config.compaction_threshold * share

    async def before_request(
        self, model: ModelSession | FallbackModel, config: SessionConfig, model_name: str
    ) -> None:
        """Compact first when the next request would cross the threshold (``auto``)."""
        if config.compaction != "auto" or not self.over_threshold(config, model_name):
            return
        await self.compact(model, config, model_name, "threshold")

    # -- compacting ----------------------------------------------------------

    async def begin(self, reason: str, tokens: int, instructions: str | None) -> str | None:
        """Every compaction begins here: the PreCompact hooks run first (``manual``
        for a request, ``auto`` otherwise). A hook's context joins the summary's
        instructions; a block skips a threshold compaction (one the user asked for,
        or one an overflow forces, goes on). Returns the instructions, or None to
        skip."""
        if self.hooks is not None:
            trigger = "manual" if reason == "manual" else "auto"
            answer = await self.hooks.pre_compact(trigger, instructions or "")
            if answer.blocks and reason == "threshold":
                why = answer.reason or "a PreCompact hook blocked it"
                self.hub.emit(WarningEvent(f"compaction skipped: {why}", "compaction"))
                return None
            if answer.context:
                instructions = (
                    f"{instructions}\n\n{answer.context}" if instructions else answer.context
                )
        self.hub.emit(CompactionStartEvent(reason, tokens))
        return instructions or ""

    async def compact(
        self,
        model: ModelSession | FallbackModel,
        config: SessionConfig,
        model_name: str,
        reason: str,
        instructions: str | None = None,
    ) -> CompactionOutcome:
        """Prune, then (if still over the threshold, or always when asked for or after
        an overflow) summarize. The outcome is also reported as ``compaction_end``."""
        before = self.tokens()
        begun = await self.begin(reason, before, instructions)
        if begun is None:
            return CompactionOutcome("none", before, before, None)
        instructions = begun or None
        pruned = self._prune(config, before, reason)
        if pruned and reason == "threshold" and not self.over_threshold(config, model_name, TARGET):
            return self._end("prune", before)
        cut = self._cut(config)
        if cut is None:
            return self._end("prune" if pruned else "none", before)
        start, end, pinned = cut
        if self.durable is not None:
            await self.durable()
        try:
            summary, usage = await self.summarize(
                model, config, model_name, start, end, instructions
            )
        except ModelError as error:
            message = f"compaction failed: {type(error).__name__}: {error}"
            self.hub.emit(WarningEvent(message, "compaction"))
            return self._end("prune" if pruned else "none", before, error=message)
        turn = CompactionTurn(
            summary=summary,
            start=start,
            end=end,
            pruned_before=self.view.prune_mark,
            tokens_before=before,
            tokens_after=self._tokens_with(summary, start, end, pinned),
            timestamp=time.time(),
            pinned=pinned,
            reason=reason,
            usage=usage,
        )
        previous = self.view.summary
        self.history.append(turn)
        return self._end("summary", before, replaced=end - (previous.end if previous else start))

    def _end(
        self, kind: str, before: int, replaced: int = 0, error: str | None = None
    ) -> CompactionOutcome:
        after = self.tokens()
        self.hub.emit(CompactionEndEvent(kind, before, after, replaced, error))
        outcome_kind = "summary" if kind == "summary" else "prune" if kind == "prune" else "none"
        return CompactionOutcome(outcome_kind, before, after, error)

    def _prune(self, config: SessionConfig, before: int, reason: str) -> bool:
        """Stub the tool outputs before the last ``compaction_keep_rounds`` rounds."""
        rounds = [i for i, t in enumerate(self.history) if isinstance(t, ToolResultsTurn)]
        keep = max(config.compaction_keep_rounds, 0)
        if len(rounds) <= keep:
            return False
        mark = rounds[-keep] if keep else len(self.history)
        self.view.messages(self.history)
        if mark <= self.view.prune_mark:
            return False
        summary = self.view.summary
        turn = CompactionTurn(
            summary=None,
            start=summary.start if summary else 0,
            end=summary.end if summary else 0,
            pruned_before=mark,
            tokens_before=before,
            tokens_after=0,
            timestamp=time.time(),
            reason=reason,
        )
        probe = ContextView()
        probe.messages([*self.history, turn])
        after = self._estimate(probe.chars)
        self.history.append(msgspec.structs.replace(turn, tokens_after=after))
        return True

    def _cut(self, config: SessionConfig) -> tuple[int, int, list[int]] | None:
        """(start, end, pinned) of the turns to summarize, or None when nothing is
        old enough: the tail keeps the last ``compaction_keep_turns`` answers."""
        history: Sequence[Turn] = self.history
        start = first_input_end(history)
        answers = [i for i, t in enumerate(history) if isinstance(t, AssistantTurn) and i >= start]
        keep = max(config.compaction_keep_turns, 1)
        if len(answers) <= keep:
            return None
        end = answers[-keep]
        previous = self.view.summary
        if previous is not None and end <= previous.end:
            return None
        users = [i for i in range(start, end) if isinstance(history[i], UserTurn)]
        return start, end, users[-1:]

    def _tokens_with(self, summary: str, start: int, end: int, pinned: list[int]) -> int:
        probe = ContextView()
        turn = CompactionTurn(summary, start, end, self.view.prune_mark, 0, 0, 0.0, pinned)
        probe.messages([*self.history, turn])
        return self._estimate(probe.chars)

    async def summarize(
        self,
        model: ModelSession | FallbackModel,
        config: SessionConfig,
        model_name: str,
        start: int,
        end: int,
        instructions: str | None,
    ) -> tuple[str, Usage]:
        """A summary of the turns ``start`` to ``end`` with the compaction prompt (a
        compaction's, or a rewind's "summarize from here"); its cost is in the ledger."""
        window = context_window(self.profile, config, model_name)
        transcript = self._transcript(start, end, budget=window * 2)
        text = f"{TRANSCRIPT_MARKER}\n\n{transcript}"
        if instructions:
            text += f"\n\nThe user's instructions for this summary: {instructions}"
        request = Request(
            model=model_name,
            messages=[Message.system(COMPACTION_PROMPT), Message.user(text)],
            provider_options=self.profile.provider_options(),
            wire_options=config.provider_options,
        )
        response = await model.complete(request)
        if self.cost is not None:
            self.cost.record(response.usage, response.model, model_name)
        summary = response.text.strip()
        if not summary:
            raise ModelError("the model answered the compaction request with no text")
        return summary, response.usage

    def _transcript(self, start: int, end: int, budget: int) -> str:
        """The turns to summarize as plain text (the earlier summary first), at most
        ``budget`` characters: the newest turns are kept when it is too long."""
        view = self.view
        view.messages(self.history)
        lines: list[str] = []
        for index, turn in shown_turns(self.history, view.summary, view.prune_mark):
            if index < 0 or start <= index < end:
                lines.append(_line(turn, index < 0))
        text = "\n\n".join(lines)
        if len(text) > budget and lines:
            head = lines[0] if view.summary is not None else ""
            tail = text[-(budget - len(head)) :] if budget > len(head) else ""
            text = f"{head}\n\n[... earlier turns left out ...]\n\n{tail}"
        return text


def _line(turn: Turn, summary: bool) -> str:
    match turn:
        case UserTurn() if summary:
            return f"[Earlier summary]\n{turn.content}"
        case UserTurn():
            return f"[User]\n{turn.content}"
        case SteeringTurn() | SystemTurn():
            return f"[Note to the agent]\n{turn.content}"
        case AssistantTurn():
            calls = "\n".join(f"-> {c.name} {c.raw_arguments[:500]}" for c in turn.tool_calls)
            return "\n".join(part for part in ("[Agent]", turn.content, calls) if part)
        case RewindTurn(summary=str(text)):
            return f"[Summary of a part the user rewound]\n{text}"
        case ToolResultsTurn():
            return "\n".join(
                f"[Result of {r.name or 'tool'}{' (error)' if r.is_error else ''}]\n"
                + str(r.content)[:TOOL_OUTPUT_CHARS]
                for r in turn.results
            )
        case _:
            return ""
