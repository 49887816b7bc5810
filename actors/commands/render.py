"""How events look in a terminal: one renderer for ``run``, ``attach`` and ``demo``.

Iterations (one per model call) get a numbered rule, reasoning is dim, tool calls
cyan with their arguments in words, their results green (red for errors; labelled
with their call when several ran in parallel), system messages (steering,
warnings, limits, approvals, subagents) yellow, and the assistant's answer is
rendered as Markdown. While a model thinks, a spinner shows how long, with the
reasoning streaming dim under it (:mod:`actors.commands.render_live`); the run
ends with its status in green or red.

All of that needs a terminal: when the output is not one, or ``NO_COLOR`` is set
(or ``TERM=dumb``), the same lines are printed plain, without escape codes, a
spinner or Markdown rendering, so logs and pipes read cleanly. It renders the
typed event bodies of :mod:`protocol.events`, whether they came over the wire
(``Event.body()``) or from a session in this process; kinds it has no line for
(and kinds newer than this client) are skipped.

When several sessions share one terminal (the demo's parent and its subagents),
each line starts with the time since the start and whose event it is.
"""

from __future__ import annotations

import os
import sys
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TextIO

from actors.commands.render_calls import call_text, result_lines, short, subagent_report
from actors.commands.render_diff import DiffLine, call_diff, collapsed, diff_fields
from actors.commands.visible import has_hidden, visible
from protocol.events import (
    AgenticEndEvent,
    AgenticIterationEvent,
    AgenticStartEvent,
    ApprovalRequestEvent,
    ApprovalResolvedEvent,
    AssistantReasoningDeltaEvent,
    AssistantTextDeltaEvent,
    AssistantTextEndEvent,
    CompactionEndEvent,
    ErrorEvent,
    EventData,
    ForkedFromEvent,
    InputInterruptedEvent,
    InterruptedEvent,
    LoopDetectionEvent,
    ProcessingEndEvent,
    RewindEvent,
    SessionEndEvent,
    SteeringInjectedEvent,
    StoreAvailableEvent,
    StoreUnavailableEvent,
    SubagentClosedEvent,
    SubagentCompletedEvent,
    SubagentFailedEvent,
    SubagentInputEvent,
    SubagentSpawnedEvent,
    SubagentWorkspaceEvent,
    ToolCallEndEvent,
    ToolCallOutputDeltaEvent,
    ToolCallStartEvent,
    TurnLimitEvent,
    UserInputEvent,
    WarningEvent,
)

if TYPE_CHECKING:  # rich is imported only for a terminal that shows colour
    from rich.console import Console

    from actors.commands.render_live import WorkingIndicator
    from protocol.diff_fields import DiffFields

STYLES = MappingProxyType(
    {
        "iteration": "bold magenta",
        "reasoning": "dim italic",
        "tool": "cyan",
        "result": "green",
        "failure": "red",
        "system": "yellow",
        "text": "bold",
        "success": "bold green",
        "fault": "bold red",
        "added": "green",
        "removed": "red",
        "hunk": "cyan",
        "context": "dim",
    }
)
DIFF_STYLES = MappingProxyType({"+": "added", "-": "removed", "@": "hunk", " ": "context"})


def styled_terminal(out: TextIO) -> bool:
    """Colours, a spinner and Markdown only for a terminal that wants them."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return out.isatty()
    except ValueError:  # a closed stream
        return False


class TextRenderer:
    """Prints events for people; keeps each session's iteration count.

    ``labelled``: prefix every line with the elapsed time and the session's label
    (for a terminal shared by a session and its subagents)."""

    def __init__(
        self,
        out: TextIO | None = None,
        colour: bool | None = None,
        labelled: bool = False,
        verbose: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.colour = styled_terminal(self.out) if colour is None else colour
        self.console: Console | None = None
        self.indicator: WorkingIndicator | None = None
        if self.colour:
            from rich.console import Console

            from actors.commands.render_live import WorkingIndicator

            self.console = Console(file=self.out, force_terminal=True, highlight=False)
            self.indicator = WorkingIndicator(self.console)
        self.labelled = labelled
        self.verbose = verbose
        """Diffs in full (else collapsed beyond :data:`DIFF_LINES` lines)."""
        self.edits: list[tuple[DiffFields, dict[str, Any]]] = []
        """The file-changing calls that succeeded, in order (for ``/diff``): which
        arguments show each as a diff, and the arguments."""
        self._edit_calls: dict[tuple[str, str], tuple[DiffFields, dict[str, Any]]] = {}
        self._labels: dict[tuple[str, str], str] = {}
        """(session, call id) -> the running call in words, for its spinner."""
        self.started = time.monotonic()
        self.iterations: dict[str, int] = {}
        self._running: dict[str, set[str]] = {}
        """Per session, the calls of its last model answer that have not ended."""
        self._parallel: dict[tuple[str, str], str] = {}
        """(session, call id) -> the call in words, for calls that ran side by side."""

    @property
    def iteration(self) -> int:
        """Model calls shown so far (of the unlabelled session)."""
        return self.iterations.get("", 0)

    def line(self, style: str, text: str, who: str = "", labelled: bool = True) -> None:
        """One line (or a few) of ``text``, made :func:`visible`: most of what is
        printed came from the model or a tool."""
        text = visible(text, keep="\n\t")
        if self.labelled and labelled:
            text = f"{time.monotonic() - self.started:5.1f}s {who:<7} {text}"
        if self.console is not None:
            from rich.text import Text

            self.console.print(Text(text, style=STYLES[style]))
        else:
            print(text, file=self.out, flush=True)

    def show(self, data: EventData | None, who: str = "") -> None:
        """One event's line(s); ``who`` labels the session when ``labelled``."""

        def system(text: str) -> None:
            self.line("system", text, who)

        self._track_thinking(data, who)
        match data:
            case AssistantTextEndEvent():  # one per model call, before its tool calls
                self._answer(data, who)
            case ToolCallStartEvent():
                text = call_text(data.tool_name, data.arguments)
                if (who, data.call_id) in self._parallel:
                    self._parallel[(who, data.call_id)] = call_text(
                        data.tool_name, data.arguments, limit=60
                    )
                self.line("tool", f"→ {text}", who)
                self._call_diff(data, who)
            case ToolCallEndEvent():
                edit = self._edit_calls.pop((who, data.call_id), None)
                if edit is not None and not data.is_error:
                    self.edits.append(edit)
                self._result(data, who)
            case UserInputEvent():
                system(f"> {data.content}")
            case SteeringInjectedEvent():
                system(f"[steering] {data.content}")
            case WarningEvent() | LoopDetectionEvent() | ErrorEvent() | InputInterruptedEvent():
                system(f"[{data.kind}] {data.message}".rstrip())
            case InterruptedEvent():
                system("[interrupted]")
            case SubagentSpawnedEvent():
                how = "background subagent" if data.background else "subagent"
                system(f"{how} spawned: {data.address}: {short(data.task, 80)}")
            case ProcessingEndEvent() if data.background_agents:
                system(background_note(data.background_agents))
            case SubagentCompletedEvent():
                system(subagent_report("completed", data.address, data.output, data.turns_used))
            case SubagentFailedEvent():
                system(subagent_report("failed", data.address, data.output, data.turns_used))
            case SubagentInputEvent() | SubagentClosedEvent():
                system(f"{data.kind.replace('_', ' ')}: {data.address}")
            case SubagentWorkspaceEvent():
                system(workspace_note(data))
            case TurnLimitEvent() if data.tokens_used is not None:
                system(f"[token budget] {data.limit}: {data.tokens_used:,} tokens used")
            case TurnLimitEvent():
                system(f"[turn limit] {data.limit}")
            case AgenticStartEvent():
                system(
                    f"[agentic mode] {data.objective} (at most {data.max_iterations} iterations)"
                )
            case AgenticIterationEvent():
                system(f"[agentic iteration {data.iteration} of {data.max_iterations}]")
            case AgenticEndEvent():
                system(f"[agentic {data.status.replace('_', ' ')}] {data.result}")
            case ApprovalRequestEvent():
                system(approval_prompt(data))
            case ApprovalResolvedEvent():
                verdict = "approved" if data.approved else "denied"
                system(f"[approval {verdict}] {data.message or ''}".rstrip())
            case SessionEndEvent():
                system(f"[session ended: {data.reason}]")
            case StoreUnavailableEvent():
                system(f"[store unavailable] {data.message}: input stopped, new input refused")
            case StoreAvailableEvent():
                system("[store available] the server's store writes again")
            case CompactionEndEvent():
                system(compaction_line(data))
            case RewindEvent():
                system(rewind_line(data))
            case ForkedFromEvent():
                system(f"[forked from {data.source} at {data.at_seq or 'its end'}: "
                       f"{data.turns} turns]")  # fmt: skip
            case _:
                pass

    def _call_diff(self, data: ToolCallStartEvent, who: str) -> None:
        fields = diff_fields(data)
        lines = call_diff(fields, data.arguments)
        if fields is None or lines is None:
            return
        self._edit_calls[(who, data.call_id)] = (fields, data.arguments)
        self.diff(lines, who)

    def diff(self, lines: list[DiffLine], who: str = "", indent: str = "    ") -> None:
        """A coloured unified diff; collapsed beyond :data:`DIFF_LINES` lines unless
        ``verbose``."""
        shown, hidden = (lines, 0) if self.verbose else collapsed(lines)
        for sign, text in shown:
            self.line(DIFF_STYLES[sign], indent + text, who)
        if hidden:
            more = f"… {hidden} more diff line{'s' if hidden != 1 else ''} (--verbose shows all)"
            self.line("context", indent + more, who)

    def _track_thinking(self, data: EventData | None, who: str) -> None:
        """The spinner runs from an input (or the last tool result of a step) until
        the model's answer is complete; deltas stream into it. While a tool runs,
        its own spinner shows the call, its time and its output's last lines."""
        indicator = self.indicator
        self._track_tools(data, who)
        match data:
            case UserInputEvent() | SteeringInjectedEvent():
                if indicator:
                    indicator.start(who)
            case AssistantReasoningDeltaEvent():
                if indicator:
                    indicator.stream(who, reasoning=data.delta)
            case AssistantTextDeltaEvent():
                if indicator:
                    indicator.stream(who, text=data.delta)
            case AssistantTextEndEvent():
                self._running[who] = {call.id for call in data.tool_calls}
                if len(data.tool_calls) > 1:
                    self._parallel.update({(who, call.id): call.name for call in data.tool_calls})
                if indicator:
                    indicator.stop(who)
            case ToolCallEndEvent():
                self._labels.pop((who, data.call_id), None)
                if indicator:
                    indicator.stop(f"{who}\0{data.call_id}")
                running = self._running.get(who, set())
                running.discard(data.call_id)
                if not running and self._running.pop(who, None) is not None and indicator:
                    indicator.start(who)  # the step's results go back to the model
            case (
                ProcessingEndEvent() | ErrorEvent() | InterruptedEvent() | SessionEndEvent()
                | TurnLimitEvent() | ApprovalRequestEvent() | InputInterruptedEvent()
            ):  # fmt: skip
                self._running.pop(who, None)
                if indicator:
                    indicator.stop(who)
                    indicator.stop_all(f"{who}\0")  # never hide a question or the end
            case _:
                pass

    def _track_tools(self, data: EventData | None, who: str) -> None:
        indicator = self.indicator
        if indicator is None:
            return
        match data:
            case ToolCallStartEvent():
                label = call_text(data.tool_name, data.arguments, limit=60)
                self._labels[(who, data.call_id)] = label
                indicator.run_tool(f"{who}\0{data.call_id}", label)
            case ToolCallOutputDeltaEvent():
                label = self._labels.get((who, data.call_id), "command")
                indicator.output(f"{who}\0{data.call_id}", label, data.text)
            case _:
                pass

    def _answer(self, data: AssistantTextEndEvent, who: str) -> None:
        count = self.iterations.get(who, 0) + 1
        self.iterations[who] = count
        self.line("iteration", f"── iteration {count} ──", who)
        if data.reasoning:
            self.line("reasoning", f"thinking: {data.reasoning.strip()}", who)
        if not data.text.strip():
            return
        if self.console is None:
            self.line("text", data.text.strip(), who)
            return
        if self.labelled:
            self.line("text", "answer:", who)
        from rich.markdown import Markdown  # here: markdown-it and pygments load slowly

        self.console.print(Markdown(visible(data.text.strip(), keep="\n\t")))

    def _result(self, data: ToolCallEndEvent, who: str) -> None:
        style = "failure" if data.is_error else "result"
        label = self._parallel.pop((who, data.call_id), None)
        head = f"  ← {label}: " if label else "  ← "
        for number, text in enumerate(result_lines(data.output)):
            self.line(style, (head if number == 0 else "    ") + text, who)

    def note(self, text: str) -> None:
        self.line("system", text)

    def status(self, success: bool, text: str) -> None:
        """The last line of a run: green when it succeeded, red when not."""
        self.close()
        self.line("success" if success else "fault", text, labelled=False)

    def close(self) -> None:
        """Take the spinner off the screen (before the command ends or reports)."""
        if self.indicator is not None:
            self.indicator.close()


def background_note(agents: list[str]) -> str:
    """The line an input ends with while background subagents still work."""
    names = ", ".join(agents)
    return f"[background] still running: {names} (each result comes back as a follow-up input)"


APPROVAL_ANSWERS = ("yes", "always (this exact command)", "no", "or type a reason to say no")
"""What a terminal offers when the request names no answers of its own and says
nothing of what "always" allows (a server from before ``details.always``)."""
INTERNAL_DETAILS = frozenset(
    {"tool", "call_id", "category", "reason", "answers", "resent", "always", "rule"}
)


def approval_prompt(data: ApprovalRequestEvent) -> str:
    """The question the seeds specify, ``Approve command: <command>? (yes/no)``, then
    what the policy said (the category and its reason) and the answers offered.

    Everything but the first words came from the model or the policy's reading of
    it, so it is shown through :func:`visible` (a ``\\r`` or an escape sequence in
    the command cannot redraw the question). Details the request carries beyond
    the known ones are listed as they are, and the offered answers come from the
    request when it names them (``details["answers"]``), so a new kind of answer
    shows without a change here."""
    subject = visible(data.subject)
    lines = [f"Approve {visible(data.action)}: {subject}? (yes/no)"]
    if has_hidden(data.subject):
        lines.append("  ! the command holds control characters or escape sequences, shown escaped")
    details = data.details
    why = [visible(str(details[key])) for key in ("category", "reason") if details.get(key)]
    if why:
        lines.append("  policy: " + " · ".join(why))
    for key, value in details.items():
        if key not in INTERNAL_DETAILS and isinstance(value, str | int | float) and value != "":
            lines.append(f"  {visible(str(key))}: {visible(str(value))}")
    lines.append("  answer: " + " / ".join(offered_answers(details)))
    return "\n".join(lines)


def offered_answers(details: dict[str, object]) -> list[str]:
    """The answers in words: the request's own (strings, or objects with a label
    and maybe the rule they create), else yes / always / rule / no / a reason.

    ``always`` is labelled with what it allows (``details.always``: exactly this
    call); ``rule`` is offered only when the request names a wider rule
    (``details.rule``), and shows that rule, so nobody grants more than they read."""
    offered = details.get("answers")
    if not isinstance(offered, list) or not offered:
        return default_answers(details)
    words: list[str] = []
    for answer in offered:
        if isinstance(answer, dict):
            label = answer.get("label") or answer.get("answer") or answer.get("scope") or ""
            rule = answer.get("rule") or answer.get("description") or ""
            text = f"{label} ({rule})" if rule else str(label)
        else:
            text = str(answer)
        if text:
            words.append(visible(text))
    return [*words, "or type a reason to say no"]


def default_answers(details: dict[str, object]) -> list[str]:
    """yes / always (what it allows) / rule (the wider rule, when one is offered) /
    no / a reason. Both texts hold the model's command: shown through visible()."""
    always, rule = details.get("always"), offered_rule(details)
    if not isinstance(always, str) or not always:
        return list(APPROVAL_ANSWERS)
    words = ["yes", f"always ({visible(always)})"]
    if rule is not None:
        words.append(f"rule ({visible(rule)})")
    return [*words, "no", "or type a reason to say no"]


def offered_rule(details: dict[str, object]) -> str | None:
    """The wider rule the request offers, or None when it offers none."""
    rule = details.get("rule")
    return rule if isinstance(rule, str) and rule.strip() else None


def rewind_line(data: RewindEvent) -> str:
    """``[rewind] to before input N: conversation 6 → 2 turns; files: ...``."""
    parts = []
    if data.mode != "code":
        summary = " (a summary stands for the rest)" if data.summarized else ""
        parts.append(f"conversation {data.turns_before} → {data.turns_after} turns{summary}")
    if data.snapshot is not None:
        parts.append(
            f"files: {data.files_changed} changed, {data.files_recreated} recreated, "
            f"{data.files_deleted} deleted"
        )
    return f"[rewind] to before input {data.to_seq}: " + "; ".join(parts)


def compaction_line(data: CompactionEndEvent) -> str:
    """``[compaction] summary: context ~N → ~M tokens`` (or why none could be made)."""
    if data.error is not None:
        return f"[compaction] {data.error}"
    return (
        f"[compaction] {data.compaction}: context ~{data.tokens_before:,} → "
        f"~{data.tokens_after:,} tokens"
    )


def workspace_note(data: SubagentWorkspaceEvent) -> str:
    """Where an isolated subagent's changes are (docs/isolation.md), in one line."""
    if data.isolation == "container":
        where = f"container {data.container[:12]}"
    elif data.state in ("created", "kept"):
        where = f"branch {data.branch}" + (f" at {data.path}" if data.state == "created" else "")
    else:
        where = f"branch {data.branch}"
    detail = f" ({data.detail})" if data.detail else ""
    return f"subagent {data.agent_id} {data.isolation} {data.state}: {where}{detail}"
