"""Session events: one frozen Struct per kind, the single source of the vocabulary.

Everything that speaks about events reads this module: the session emits these
Structs, the store writes their fields, the gateway sends them as ``event`` frames
(the frame's ``kind`` names the Struct and its ``data`` holds the Struct's fields),
``troupe schema`` describes each kind, the terminal renderer matches on them, and
the event reference in ``docs/protocol.md`` is generated from them
(``python -m protocol.event_docs``).

Adding a kind is a change to this module only: define the Struct (a subclass of
:class:`EventBody` with its ``kind`` ClassVar) and add it to :data:`EventData`.
A test fails if a subclass is left out of the union or the docs are not
regenerated.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import msgspec

from protocol.diff_fields import DiffFields
from protocol.llm import Usage
from protocol.session import LoopState, SessionState, Spend


class EventBody(msgspec.Struct, frozen=True):
    """What every event kind shares: its name on the wire, and whether it is kept.

    ``durable`` events are stored and replayed; the others (deltas) are live only."""

    kind: ClassVar[str]
    durable: ClassVar[bool] = True


# -- the session's life -------------------------------------------------------


class SessionStartEvent(EventBody, frozen=True):
    """The session is ready: its profile, model and working directory; ``agent_depth``
    is how many subagent levels lie above it (0 for a top-level session)."""

    kind = "session_start"
    profile: str
    model: str
    working_directory: str
    agent_depth: int = 0


class SessionEndEvent(EventBody, frozen=True):
    """The session closed (the last event of its stream); ``turns`` counts its history."""

    kind = "session_end"
    reason: str
    state: SessionState = "closed"
    turns: int = 0


class UserInputEvent(EventBody, frozen=True):
    """An input started processing."""

    kind = "user_input"
    content: str


class ProcessingEndEvent(EventBody, frozen=True):
    """An input ended; ``state`` is what the session is now. ``interrupted`` is set
    when the server stopped while the input ran (written on recovery).
    ``background_agents``: the background subagents still working (by id); each
    one's result comes back later as a follow-up input."""

    kind = "processing_end"
    state: SessionState
    interrupted: bool = False
    background_agents: list[str] = []
    spend: Spend | None = None
    """The session's cost ledger so far, its subagents' included."""


# -- the model's answer -------------------------------------------------------


class LoopStateEvent(EventBody, frozen=True):
    """What the agent is doing now: ``thinking`` (asking the model),
    ``executing_tool``, ``waiting_approval``, or how the input ended (``completed``,
    ``error``, ``interrupted``; an iteration limit counts as interrupted).
    ``get_session`` gives the current one."""

    kind = "loop_state"
    state: LoopState


class AssistantTextStartEvent(EventBody, frozen=True):
    """The model started answering."""

    kind = "assistant_text_start"


class AssistantTextDeltaEvent(EventBody, frozen=True):
    """A piece of the answer's text, as it streams (live only)."""

    kind = "assistant_text_delta"
    durable = False
    delta: str


class AssistantReasoningDeltaEvent(EventBody, frozen=True):
    """A piece of the model's reasoning, as it streams (live only)."""

    kind = "assistant_reasoning_delta"
    durable = False
    delta: str


class CalledTool(msgspec.Struct, frozen=True):
    """A tool call the model asked for, by id and name."""

    id: str
    name: str


class AssistantTextEndEvent(EventBody, frozen=True):
    """The model's whole answer: one per model call, before its tool calls run."""

    kind = "assistant_text_end"
    text: str
    reasoning: str | None = None
    tool_calls: list[CalledTool] = []
    usage: Usage = Usage()
    cost_usd: float | None = None
    """What the call cost at list prices, where the model catalog knows them."""


# -- tools --------------------------------------------------------------------


class ToolCallStartEvent(EventBody, frozen=True):
    """A tool call starts, with the arguments the model gave and its tool's declared kind."""

    kind = "tool_call_start"
    call_id: str
    tool_name: str
    arguments: dict[str, Any] = {}
    tool_kind: str = ""
    """What the tool does, as it declares (ACP's kinds: read, edit, delete, move,
    search, execute, think, fetch, other); "" in events stored before it was sent."""
    diff: DiffFields | msgspec.UnsetType | None = msgspec.UNSET
    """Which of the arguments show the call as a diff, as its tool declares (None:
    a call that changes no file, or a tool that declares none): a client draws the
    diff without a catalogue of the tools. Absent from events stored before it was
    sent."""


class ToolCallOutputDeltaEvent(EventBody, frozen=True):
    """Output of a running command, as it comes (live only)."""

    kind = "tool_call_output_delta"
    durable = False
    call_id: str
    stream: Literal["stdout", "stderr"]
    text: str


class ToolCallEndEvent(EventBody, frozen=True):
    """A tool call ended; ``output`` is complete and untruncated."""

    kind = "tool_call_end"
    call_id: str
    tool_name: str
    output: str
    is_error: bool = False


# -- steering, limits and warnings --------------------------------------------


class SteeringInjectedEvent(EventBody, frozen=True):
    """A steering message was added to the history before the next model call."""

    kind = "steering_injected"
    content: str


class TurnLimitEvent(EventBody, frozen=True):
    """A limit stopped the input: ``round`` is set for ``max_tool_rounds_per_input``
    and ``agentic_max_iterations`` (the iterations used), ``total_turns`` for
    ``max_turns``, ``tokens_used`` for the token budgets, ``cost_usd`` for the
    dollar caps (``max_input_cost``, ``max_cost``)."""

    kind = "turn_limit"
    limit: Literal[
        "max_tool_rounds_per_input",
        "max_turns",
        "agentic_max_iterations",
        "input_token_budget",
        "session_token_budget",
        "max_input_cost",
        "max_cost",
    ]
    round: int | None = None
    total_turns: int | None = None
    tokens_used: int | None = None
    cost_usd: float | None = None


class AgenticStartEvent(EventBody, frozen=True):
    """The model entered agentic mode (``enter_agentic_mode``): it works on
    ``objective`` with tools until it calls ``complete`` or uses ``max_iterations``."""

    kind = "agentic_start"
    user_prompt: str
    objective: str
    max_iterations: int


class AgenticIterationEvent(EventBody, frozen=True):
    """An iteration of the agentic loop starts (a model call in agentic mode)."""

    kind = "agentic_iteration"
    iteration: int
    max_iterations: int


class AgenticEndEvent(EventBody, frozen=True):
    """The agentic loop ended: ``complete`` was called with ``status`` (success,
    failure, partial), or ``iteration_limit`` was reached; ``result`` is what the
    user is shown."""

    kind = "agentic_end"
    status: Literal["success", "failure", "partial", "iteration_limit"]
    result: str
    iterations: int


class LoopDetectionEvent(EventBody, frozen=True):
    """The same tool calls repeat; ``message`` is the warning added to the history."""

    kind = "loop_detection"
    message: str


class WarningEvent(EventBody, frozen=True):
    """Something the user should know; the data's ``kind`` says what
    (``context_usage``, ``context_length``)."""

    kind = "warning"
    message: str
    category: str = msgspec.field(default="", name="kind")


class CompactionStartEvent(EventBody, frozen=True):
    """The conversation is about to be compacted: ``reason`` is ``threshold`` (the
    next request would fill too much of the context window), ``overflow`` (the
    provider refused the request as too long) or ``manual``; ``tokens_before`` is
    the context's estimated size."""

    kind = "compaction_start"
    reason: str
    tokens_before: int


class CompactionEndEvent(EventBody, frozen=True):
    """The compaction ended: ``compaction`` is ``prune`` (old tool outputs became
    stubs), ``summary`` (older turns were summarized; ``replaced_turns`` of them) or
    ``none``; ``error`` says why a summary could not be made."""

    kind = "compaction_end"
    compaction: str
    tokens_before: int
    tokens_after: int
    replaced_turns: int = 0
    error: str | None = None


class RewindEvent(EventBody, frozen=True):
    """The session was rewound to just before the input whose ``user_input`` event
    is ``to_seq``. ``mode``: ``conversation`` (that input and the turns after it are
    cut: the events stay, a client hides those from ``to_seq`` on before this
    one), ``code`` (the working tree's files were restored from ``snapshot``) or
    ``both``. ``summarized``: a summary replaced the cut turns. ``undo_snapshot``
    holds the tree as it was just before a code rewind."""

    kind = "rewind"
    to_seq: int
    mode: str
    turns_before: int = 0
    turns_after: int = 0
    summarized: bool = False
    files_changed: int = 0
    files_recreated: int = 0
    files_deleted: int = 0
    snapshot: str | None = None
    undo_snapshot: str | None = None


class ForkedFromEvent(EventBody, frozen=True):
    """This session is a fork: its history is ``source``'s up to the event
    ``at_seq`` (0: all of it); with ``working_directory``, it has its own copy of
    the working tree there, from ``snapshot``."""

    kind = "forked_from"
    source: str
    at_seq: int
    turns: int
    working_directory: str | None = None
    snapshot: str | None = None


class WorkspaceSnapshotEvent(EventBody, frozen=True):
    """The working tree was recorded (docs/snapshots.md): ``commit`` in the shadow
    repository ``shadow`` on the environment's host, of the tree under ``root``,
    taken at a user input (``reason`` ``input``, before the model call) or before a
    round that runs a mutating tool (``round``). ``input_seq`` is the sequence number
    of that input's ``user_input`` event: the snapshot a rewind to the input restores
    is the ``input`` one with its sequence number. ``skipped`` names what was left
    out besides ignored files (files over the size cap, nested repositories; at
    most 200, ``skipped_total`` counts them all)."""

    kind = "workspace_snapshot"
    commit: str
    reason: str
    input_seq: int
    root: str
    shadow: str
    files: int = 0
    skipped: list[str] = []
    skipped_total: int = 0


class ServiceRestartedEvent(EventBody, frozen=True):
    """A service the session depends on (its environment, the SSH bridge) failed
    and was restarted in place by its supervisor; ``restarts`` counts them."""

    kind = "service_restarted"
    address: str
    error_type: str
    message: str
    restarts: int


class ModelFallbackEvent(EventBody, frozen=True):
    """The model endpoint failed past its retries: this call and the ones after it
    go to the next endpoint of the session's fallback list (history converted)."""

    kind = "model_fallback"
    from_endpoint: str
    from_wire: str
    from_model: str
    to_endpoint: str
    to_wire: str
    to_model: str
    reason: str
    message: str


class ErrorEvent(EventBody, frozen=True):
    """A model call failed; ``error_type`` is the typed error's name."""

    kind = "error"
    error_type: str
    message: str
    retryable: bool = False


class InterruptedEvent(EventBody, frozen=True):
    """The input was stopped by an ``interrupt`` request (the session stays open)."""

    kind = "interrupted"


class InputInterruptedEvent(EventBody, frozen=True):
    """The server stopped while this input ran (written on recovery)."""

    kind = "input_interrupted"
    message: str


class EventsMissedEvent(EventBody, frozen=True):
    """A subscriber fell behind and lost ``missed`` events; ``next_seq`` is the next
    one it will see (0 if none is queued). Never stored."""

    kind = "events_missed"
    durable = False
    missed: int
    next_seq: int = 0


class StoreUnavailableEvent(EventBody, frozen=True):
    """The server's store cannot write (disk full, a read-only or vanished data
    directory, a PostgreSQL store that is down or unreachable): this session's
    writes wait, its running input is stopped as interrupted, new inputs are
    refused with ``store_unavailable``. Sent live, out of sequence (``seq`` 0),
    while earlier events wait to be stored; never stored. Also sent to a new
    subscriber whose replay cannot be read now (PostgreSQL down): the replay
    follows ``store_available``."""

    kind = "store_unavailable"
    durable = False
    message: str
    since: float = 0.0


class StoreAvailableEvent(EventBody, frozen=True):
    """The store writes again: the events held back follow, then new inputs are
    taken. Sent live with ``seq`` 0; never stored."""

    kind = "store_available"
    durable = False
    down_seconds: float = 0.0


# -- approvals ----------------------------------------------------------------


class ApprovalRequestEvent(EventBody, frozen=True):
    """A client must say yes or no: ``action`` is the kind of thing (``command``),
    ``subject`` the thing itself (the command line). Sent again, with ``resent``,
    to a client that resubscribes while it is pending."""

    kind = "approval_request"
    request_id: str
    action: str
    subject: str
    details: dict[str, Any] = {}


class ApprovalResolvedEvent(EventBody, frozen=True):
    """An approval request was answered (or withdrawn, or cut short by a crash).
    ``scope`` ``command``: exactly this call is approved for the rest of the
    session; ``rule``: the rule the request named in ``details.rule``."""

    kind = "approval_resolved"
    request_id: str
    approved: bool
    message: str | None = None
    scope: str = "once"
    by: str = "client"
    """Who answered: ``client``, ``timeout``, ``interrupt``, ``restart``."""


class PolicyDecisionEvent(EventBody, frozen=True):
    """The audit trail: what the policy said about one tool call, and, when it
    asked, the answer (``decided_by`` is ``policy``, ``grant``, ``client``,
    ``timeout``)."""

    kind = "policy_decision"
    call_id: str
    tool: str
    category: str
    action: str
    rule: str
    reason: str
    subject: str = ""
    decided_by: str = "policy"


class HookRunEvent(EventBody, frozen=True):
    """A hook ran (Claude Code / Codex format, docs/hooks.md): which event, which
    file declared it, its command, exit code and what it decided (``allow``,
    ``deny``, ``ask``, ``block``, ``context``, ``stop``, ``ok``, ``error``). Part of
    the audit trail."""

    kind = "hook_run"
    event: str
    source: str
    command: str
    exit_code: int
    outcome: str
    reason: str = ""
    tool: str = ""
    call_id: str = ""
    duration_ms: int = 0


# -- subagents ----------------------------------------------------------------


class SubagentSpawnedEvent(EventBody, frozen=True):
    """A subagent started working on ``task``; subscribe to ``address`` to follow it.
    ``background``: it may outlive the parent's input, and its result comes back to
    the parent as a follow-up input."""

    kind = "subagent_spawned"
    agent_id: str
    address: str
    task: str
    background: bool = False


class SubagentInputEvent(EventBody, frozen=True):
    """The parent sent a subagent a message (``interrupt``: its step was cut short)."""

    kind = "subagent_input"
    agent_id: str
    address: str
    interrupt: bool = False


class SubagentCompletedEvent(EventBody, frozen=True):
    """A subagent's input completed with ``output``."""

    kind = "subagent_completed"
    agent_id: str
    address: str
    output: str
    turns_used: int = 0


class SubagentFailedEvent(EventBody, frozen=True):
    """A subagent's input failed, or the subagent crashed or stopped."""

    kind = "subagent_failed"
    agent_id: str
    address: str
    output: str
    turns_used: int = 0


class SubagentClosedEvent(EventBody, frozen=True):
    """A subagent was closed (it and its own subagents are gone)."""

    kind = "subagent_closed"
    agent_id: str
    address: str


class SubagentWorkspaceEvent(EventBody, frozen=True):
    """Where an isolated subagent's changes are (docs/isolation.md). ``state``:
    ``created`` (it works there), ``kept`` (its worktree is removed and its branch,
    holding its work, is left for review), ``merged`` (its branch was merged into
    the parent's), ``removed`` (nothing was left to keep: worktree and branch, or
    container, are gone). ``path`` is the worktree (or the workspace inside the
    container), ``branch`` its branch, ``container`` the container's id."""

    kind = "subagent_workspace"
    agent_id: str
    address: str
    isolation: str
    state: str
    path: str = ""
    branch: str = ""
    container: str = ""
    detail: str = ""


EventData = (
    SessionStartEvent
    | SessionEndEvent
    | UserInputEvent
    | ProcessingEndEvent
    | LoopStateEvent
    | AssistantTextStartEvent
    | AssistantTextDeltaEvent
    | AssistantReasoningDeltaEvent
    | AssistantTextEndEvent
    | ToolCallStartEvent
    | ToolCallOutputDeltaEvent
    | ToolCallEndEvent
    | SteeringInjectedEvent
    | TurnLimitEvent
    | AgenticStartEvent
    | AgenticIterationEvent
    | AgenticEndEvent
    | LoopDetectionEvent
    | WarningEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | RewindEvent
    | ForkedFromEvent
    | WorkspaceSnapshotEvent
    | ServiceRestartedEvent
    | ModelFallbackEvent
    | ErrorEvent
    | InterruptedEvent
    | InputInterruptedEvent
    | EventsMissedEvent
    | StoreUnavailableEvent
    | StoreAvailableEvent
    | ApprovalRequestEvent
    | ApprovalResolvedEvent
    | PolicyDecisionEvent
    | HookRunEvent
    | SubagentSpawnedEvent
    | SubagentInputEvent
    | SubagentCompletedEvent
    | SubagentFailedEvent
    | SubagentClosedEvent
    | SubagentWorkspaceEvent
)
"""Every event kind. A new kind is a new :class:`EventBody` subclass added here."""

EVENT_TYPES: Mapping[str, type[EventData]] = MappingProxyType(
    {cls.kind: cls for cls in typing.get_args(EventData)}
)
"""The Struct of each kind, by its name on the wire."""

EPHEMERAL_KINDS: frozenset[str] = frozenset(
    kind for kind, cls in EVENT_TYPES.items() if not cls.durable
)
"""Deltas: shown live, not worth keeping once the full text has been sent."""


class SessionEvent(msgspec.Struct, frozen=True):
    """One event of one session; ``seq`` counts up from 1 within it, without gaps.

    ``data`` is the typed body; ``kind`` is its name (what the store's column and the
    wire frame's ``kind`` hold)."""

    session_id: str
    seq: int
    timestamp: float
    data: EventData

    @property
    def kind(self) -> str:
        return self.data.kind


class UnknownEventKind(ValueError):
    """Stored or received data named a kind this version does not know."""


def event_data(kind: str, fields: Mapping[str, Any]) -> EventData:
    """The typed body of a ``kind`` event from its plain fields (a frame's ``data``).

    Raises :class:`UnknownEventKind` for a kind this version does not know and
    ``msgspec.ValidationError`` for fields that do not fit it."""
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise UnknownEventKind(f"unknown event kind {kind!r}")
    return msgspec.convert(fields, cls)


def decode_event_data(kind: str, blob: bytes) -> EventData:
    """The typed body of a stored event (its ``data`` column, JSON)."""
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise UnknownEventKind(f"unknown event kind {kind!r}")
    return msgspec.json.decode(blob, type=cls)


def event_fields(data: EventData) -> dict[str, Any]:
    """The body's fields as the ``data`` object of a frame (by their wire names)."""
    return msgspec.to_builtins(data)


def event_record(event: SessionEvent) -> dict[str, Any]:
    """An event as one plain object: ``session_id``, ``seq``, ``timestamp``, ``kind``
    and ``data`` (as in a session's ``pending_approvals``)."""
    return {
        "session_id": event.session_id,
        "seq": event.seq,
        "timestamp": event.timestamp,
        "kind": event.kind,
        "data": event_fields(event.data),
    }


__all__ = [
    "EPHEMERAL_KINDS",
    "EVENT_TYPES",
    "AgenticEndEvent",
    "AgenticIterationEvent",
    "AgenticStartEvent",
    "ApprovalRequestEvent",
    "ApprovalResolvedEvent",
    "AssistantReasoningDeltaEvent",
    "AssistantTextDeltaEvent",
    "AssistantTextEndEvent",
    "AssistantTextStartEvent",
    "CalledTool",
    "CompactionEndEvent",
    "CompactionStartEvent",
    "ErrorEvent",
    "EventBody",
    "EventData",
    "EventsMissedEvent",
    "ForkedFromEvent",
    "HookRunEvent",
    "InputInterruptedEvent",
    "InterruptedEvent",
    "LoopDetectionEvent",
    "LoopStateEvent",
    "PolicyDecisionEvent",
    "ProcessingEndEvent",
    "RewindEvent",
    "SessionEndEvent",
    "SessionEvent",
    "SessionStartEvent",
    "SteeringInjectedEvent",
    "StoreAvailableEvent",
    "StoreUnavailableEvent",
    "SubagentClosedEvent",
    "SubagentCompletedEvent",
    "SubagentFailedEvent",
    "SubagentInputEvent",
    "SubagentSpawnedEvent",
    "SubagentWorkspaceEvent",
    "ToolCallEndEvent",
    "ToolCallOutputDeltaEvent",
    "ToolCallStartEvent",
    "TurnLimitEvent",
    "UnknownEventKind",
    "UserInputEvent",
    "WarningEvent",
    "WorkspaceSnapshotEvent",
    "decode_event_data",
    "event_data",
    "event_fields",
    "event_record",
]
