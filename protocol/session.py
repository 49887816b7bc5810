"""Sessions: turns, configuration, and the requests a session answers
(coding-agent-loop-spec §2). Its events are in :mod:`protocol.events`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from protocol.asks import Asks
from protocol.llm import Message, ToolCall, ToolResult, Usage
from protocol.mcp import McpServerConfig
from protocol.spend import Spend

if TYPE_CHECKING:
    from protocol.events import SessionEvent

SessionState = Literal["idle", "processing", "awaiting_input", "closed"]
ToolCalling = Literal["auto", "native", "text"]
"""How tools reach the model: ``native`` (the provider's tool calls), ``text`` (a
call format in the system prompt, calls parsed from the answer's text), or
``auto`` (native, switching to text when an OpenAI-compatible server rejects
``tools``)."""

ApprovalMode = Literal["ask", "deny", "allow-workspace", "never-ask"]
"""What happens to a call the policy would ask about: ``ask`` raises an approval
request, ``deny`` refuses it at once, ``allow-workspace`` lets file changes inside
the working directory through (commands still ask), ``never-ask`` lets every
such call through (what the policy denies stays denied)."""

CompactionMode = Literal["auto", "manual", "off"]
"""When the conversation is compacted (see ``SessionConfig.compaction``)."""
Isolation = Literal["none", "worktree", "container"]
"""Where a subagent works (docs/isolation.md): in its parent's directory (``none``),
in a git worktree of its own on a branch named after it (``worktree``), or in a
container of its own with a copy of the workspace (``container``)."""

LoopState = Literal[
    "thinking", "executing_tool", "waiting_approval", "completed", "error", "interrupted"
]
"""What the agent is doing (forge-agent-loop-prd "Agent Loop States"): asking the
model, running tools, waiting for an approval, or how its last input ended."""


class UserTurn(msgspec.Struct, frozen=True, tag="user", tag_field="turn"):
    content: str
    timestamp: float
    seq: int = 0
    """The seq of its ``user_input`` event (0 in histories from before it was kept):
    how ``rewind`` and ``fork`` find it."""


class AssistantTurn(msgspec.Struct, frozen=True, tag="assistant", tag_field="turn"):
    """The model's answer. ``message`` keeps every part as the provider sent it
    (thinking signatures included), so it goes back to the provider unchanged."""

    content: str
    tool_calls: list[ToolCall]
    reasoning: str | None
    usage: Usage
    response_id: str | None
    timestamp: float
    message: Message | None = None
    seq: int = 0
    """The seq of its ``assistant_text_end`` event (0 in histories from before it
    was kept): how ``fork`` finds it."""


class ToolResultsTurn(msgspec.Struct, frozen=True, tag="tool_results", tag_field="turn"):
    results: list[ToolResult]
    timestamp: float


class SystemTurn(msgspec.Struct, frozen=True, tag="system", tag_field="turn"):
    content: str
    timestamp: float


class SteeringTurn(msgspec.Struct, frozen=True, tag="steering", tag_field="turn"):
    content: str
    timestamp: float


class CompactionTurn(msgspec.Struct, frozen=True, tag="compaction", tag_field="turn"):
    """A compaction of the conversation, kept in the history like any turn so that a
    resumed or replayed session rebuilds exactly the context the model saw, without
    asking the model again (see :mod:`actors.session.context_view`).

    ``summary`` (None for a pruning only) stands for the turns ``start`` to ``end``
    (history indices, end excluded), except the ``pinned`` ones, kept verbatim after
    it. Tool outputs of turns before ``pruned_before`` are one-line stubs."""

    summary: str | None
    start: int
    end: int
    pruned_before: int
    tokens_before: int
    tokens_after: int
    timestamp: float
    pinned: list[int] = []
    reason: str = "threshold"
    """``threshold``, ``overflow`` (the provider said the context was too long) or ``manual``."""
    usage: Usage | None = None
    """What the summary's model call used (it counts in the cost ledger)."""


class RewindTurn(msgspec.Struct, frozen=True, tag="rewind", tag_field="turn"):
    """A conversation rewind, appended like any turn (the history stays append-only,
    so the turns it cuts stay stored for audit): the conversation goes on from its
    first ``keep`` turns, as the conversation was when the rewind was made (earlier
    rewinds applied). With ``summary`` (the "summarize from here" variant) the cut
    turns are replaced by that summary, shown to the model as a user message. See
    :class:`actors.session.turns.TurnLog`."""

    keep: int
    to_seq: int
    """The seq of the ``user_input`` event rewound to (that input is cut too)."""
    timestamp: float
    summary: str | None = None
    usage: Usage | None = None
    """What the summary's model call used (it counts in the cost ledger)."""


Turn = (
    UserTurn
    | AssistantTurn
    | ToolResultsTurn
    | SystemTurn
    | SteeringTurn
    | CompactionTurn
    | RewindTurn
)


class SessionConfig(msgspec.Struct, frozen=True):
    """Limits and settings (§2.2). Zero limits mean unlimited."""

    max_turns: int = 0
    max_tool_rounds_per_input: int = 0
    default_command_timeout_ms: int = 10_000
    max_command_timeout_ms: int = 600_000
    reasoning_effort: str | None = None
    model: str | None = None
    """Overrides the profile's model; takes effect on the next model call."""
    tool_output_limits: dict[str, int] = {}
    tool_line_limits: dict[str, int | None] = {}
    enable_loop_detection: bool = True
    loop_detection_window: int = 10
    max_subagent_depth: int = 1
    max_subagents: int = 6
    """Live subagents one session may have at a time."""
    user_instructions: str | None = None
    context_warning_ratio: float = 0.8
    mcp_servers: list[McpServerConfig] = []
    """MCP servers whose tools this session (and its subagents) may call."""
    policy: str = "interactive"
    """The safety policy's preset by name (``interactive``, ``unattended``,
    ``sandboxed``, ``permissive`` ...; see ``actors/policy/presets.py``)."""
    policy_overrides: dict[str, Any] = {}
    """Fields of the preset replaced for this session (``{"admin": "deny"}``)."""
    approval_mode: ApprovalMode = "ask"
    """What happens to a call the policy would ask about (see :data:`ApprovalMode`)."""
    nobody_to_ask: bool = False
    """No client can answer an approval (a headless run): a request that would be
    raised is denied at once (``denied: nobody to ask``) instead of waiting."""
    loop_breaking_tools: bool = False
    """Offer task_completion, ask_question and converse; calling one ends the input
    (forge-agent-loop-prd FR6)."""
    iteration_warning_ratio: float = 0.0
    """Tell the model when the tool rounds of an input reach this fraction of
    ``max_tool_rounds_per_input`` (0: never)."""
    repeated_error_warn_after: int = 0
    """Identical failing calls after which the model is told to change approach (0: off)."""
    repeated_error_escalate_after: int = 0
    """Identical failing calls after which the input stops and waits for the user (0: off)."""
    terminal_tool: bool = False
    """Offer ``terminal(command, persistent, close)``: ephemeral commands, or one
    persistent shell per session (agentic-behavior-tool.md 6)."""
    tool_calling: ToolCalling | None = None
    """Native or text tool calls; None: what the provider profile says."""
    agentic_mode: bool = False
    """Offer ``enter_agentic_mode(user_prompt, objective)`` and
    ``complete(result, status)`` (agentic-behavior-tool.md 2-4): in agentic mode a
    state block is placed before the latest user prompt of each request, and the
    loop runs until ``complete`` or ``agentic_max_iterations``."""
    agentic_max_iterations: int = 25
    """Model calls an agentic loop may make before it stops (0: unlimited)."""
    input_token_budget: int = 0
    """Tokens (input plus output, as the model reports them) one input may spend
    before it stops (0: unlimited)."""
    session_token_budget: int = 0
    """Tokens the whole session may spend before its inputs stop (0: unlimited)."""
    token_budget_warning_ratio: float = 0.8
    """Warn the user and the model once a budget is this far spent (0: never)."""
    compaction: CompactionMode = "auto"
    """``auto``: compact before a request that would cross ``compaction_threshold`` of
    the context window, and once after a context-overflow error; ``manual``: only
    when asked (``compact``); ``off``: never."""
    compaction_threshold: float = 0.85
    """The share of the context window a request may fill before ``auto`` compacts."""
    context_window: int = 0
    """The context window in tokens (0: the model catalog's, else the profile's)."""
    compaction_keep_rounds: int = 3
    """Tool outputs of the last this many rounds are never pruned to a stub."""
    compaction_keep_turns: int = 4
    """The last this many model answers (with their results) are never summarized."""
    max_cost: float = 0.0
    """Dollars the whole session may spend, its subagents' included, at the model
    catalog's prices (cache reads and writes at theirs) before its inputs stop (0: no cap)."""
    max_input_cost: float = 0.0
    """Dollars one input may spend, its subagents' included (0: no cap)."""
    max_image_bytes: int = 5 * 1024 * 1024
    """The largest image a tool result may carry to the model (``read_file`` of an
    image, an MCP tool's image); a larger one becomes a note saying so."""
    provider_options: dict[str, Any] = {}
    """Fields added to every model request's body on whichever wire the session
    talks (``{"service_tier": "flex"}``; coding-agent-loop-spec 2.2). The fields
    Troupe sets itself (``model``, ``messages``/``contents``/``input``, ``tools``,
    ``stream``, the system prompt's) are refused: ``invalid_request``."""
    isolation: Isolation = "none"
    """Where this session's subagents work unless ``spawn_agent`` says otherwise
    (see :data:`Isolation` and ``actors/session/isolation.py``)."""
    worktree_copy: list[str] = []
    """Ignored files (paths relative to the repository's root, such as ``.env``)
    copied into each new worktree."""
    isolation_image: str | None = None
    """The image of ``container`` isolation (None: the image of the session's own
    Docker environment)."""
    snapshots: bool = True
    """Record the working tree in a shadow git repository at each input and before
    each round that runs a mutating tool (docs/snapshots.md), for code rewind."""
    snapshot_max_file_bytes: int = 5 * 1024 * 1024
    """Files larger than this are left out of snapshots (and named in the event)."""


class Submit(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Start processing ``text``; while busy it is queued after the current input."""

    text: str


class Steer(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Inject ``text`` after the current tool round (on the next submit when idle)."""

    text: str


class FollowUp(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Process ``text`` once the current input is done."""

    text: str


class Abort(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Stop now: cancel the model stream, kill commands, and close the session."""

    reason: str = "aborted"


class Interrupt(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Stop the current work but keep the session open (it returns to idle).

    ``immediate`` cancels the step in progress (a tool still running gets an
    "interrupted" result); otherwise the session stops after the current step,
    before its next model call. Queued follow-ups are kept."""

    immediate: bool = True


class CloseSession(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Close an idle session (a busy one is aborted)."""


class UpdateConfig(msgspec.Struct, Asks[SessionConfig], frozen=True, tag=True, tag_field="type"):
    """Change settings between turns; unset fields keep their value."""

    reasoning_effort: str | msgspec.UnsetType | None = msgspec.UNSET
    model: str | msgspec.UnsetType | None = msgspec.UNSET
    max_turns: int | msgspec.UnsetType = msgspec.UNSET
    max_tool_rounds_per_input: int | msgspec.UnsetType = msgspec.UNSET
    approval_mode: ApprovalMode | msgspec.UnsetType = msgspec.UNSET
    nobody_to_ask: bool | msgspec.UnsetType = msgspec.UNSET
    provider_options: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


ApprovalScope = Literal["once", "command", "rule", "session", "tool"]
"""How far an approval reaches. ``once``: this call. ``command`` ("always"):
exactly this call for the rest of the session (a shell line: the same line in
the same working directory). ``rule``: the wider rule the request's
``details["rule"]`` shows (``commands starting with `npm test` in DIR``, ``every
write_file call``); never an ``admin`` shell line other than this one, and not
offered for one (``rule`` is then null and the answer acts as ``command``).
``session`` is the old name of ``command``, ``tool`` the old name of ``rule``."""


class AnswerApproval(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """A client's answer to a pending approval request; ``message`` reaches the
    model with a denial."""

    request_id: str
    approved: bool
    message: str | None = None
    scope: ApprovalScope = "once"
    by: str = "client"


class ExtendLimit(msgspec.Struct, Asks[SessionConfig], frozen=True, tag=True, tag_field="type"):
    """The last input stopped at an iteration limit: raise that limit by ``by`` and
    continue the same input (no new user message). Answered with the new settings;
    refused when the session is busy or its last input did not stop at a limit."""

    by: int


class CompactionOutcome(msgspec.Struct, frozen=True):
    """What a compaction did: ``kind`` is ``prune``, ``summary`` or ``none`` (nothing
    old enough to compact), with the context's estimated tokens before and after."""

    kind: Literal["prune", "summary", "none"]
    tokens_before: int
    tokens_after: int
    error: str | None = None


class Compact(msgspec.Struct, Asks[CompactionOutcome], frozen=True, tag=True, tag_field="type"):
    """Compact the conversation now (prune, then summarize the older turns), with
    optional ``instructions`` for the summary. Refused while the session is busy."""

    instructions: str | None = None


RewindMode = Literal["code", "conversation", "both"]
"""What a rewind restores: the working tree's files, the conversation, or both."""


class RewindOutcome(msgspec.Struct, frozen=True):
    """What a rewind did: the conversation's turns before and after (equal when only
    the code was rewound), the input's text (to edit and send again), whether a
    summary replaced the cut part, and the files the code rewind restored."""

    to_seq: int
    mode: RewindMode
    text: str
    turns_before: int
    turns_after: int
    summarized: bool = False
    changed: list[str] = []
    recreated: list[str] = []
    deleted: list[str] = []
    snapshot: str | None = None
    """The snapshot the files were restored from (None: the code was not rewound)."""
    undo_snapshot: str | None = None
    """The snapshot taken just before restoring (restore it to undo the code rewind)."""


class TreeSnapshot(msgspec.Struct, frozen=True):
    """A recorded working tree (a ``workspace_snapshot`` event): ``commit`` in the
    shadow repository ``shadow``, of the tree under ``root``."""

    commit: str
    root: str
    shadow: str


class Rewind(msgspec.Struct, Asks[RewindOutcome], frozen=True, tag=True, tag_field="type"):
    """Rewind the conversation to just before the user input whose ``user_input``
    event is ``to_seq``: that input and every turn after it are cut (a durable
    :class:`RewindTurn`; with ``summarize``, replaced by a summary the model writes).
    ``code_snapshot``: the working tree's snapshot taken at that input, restored
    first (the host finds it). Refused while the session is processing."""

    to_seq: int
    conversation: bool = True
    summarize: bool = False
    instructions: str | None = None
    code_snapshot: TreeSnapshot | None = None


class WaitIdle(msgspec.Struct, Asks["SessionOutcome"], frozen=True, tag=True, tag_field="type"):
    """Answered, with a :class:`SessionOutcome`, when the session is no longer
    processing (idle, awaiting input, or closed)."""


class GetSnapshot(msgspec.Struct, Asks["SessionSnapshot"], frozen=True, tag=True, tag_field="type"):
    pass


class EventStream(Protocol):
    """A subscription to one session's events, in process (what ``Subscribe`` is
    answered with): an async iterator that ends when the session closes."""

    session_id: str

    def __aiter__(self) -> EventStream: ...

    async def __anext__(self) -> SessionEvent: ...

    def close(self) -> None:
        """Stop receiving (the iterator ends)."""
        ...


class Subscribe(msgspec.Struct, Asks[EventStream], frozen=True, tag=True, tag_field="type"):
    """In process: answered with a Subscription (an async iterator of events).
    ``buffer`` and ``buffer_bytes`` bound what a slow reader may fall behind by (in
    events, in encoded bytes); ``after_seq`` starts with the recent durable events
    numbered after it (0: from SESSION_START)."""

    buffer: int = 1024
    after_seq: int | None = None
    buffer_bytes: int = 1 << 20


class SubscribeRef(msgspec.Struct, Asks[None], frozen=True, tag=True, tag_field="type"):
    """Deliver every event to ``ref`` (an actor that handles SessionEvent) with
    ``tell``. A slow ref only holds up its own forwarding: it falls behind, bounded
    by ``buffer``, and receives an ``events_missed`` event. Not sent over the wire."""

    ref: Any
    buffer: int = 1024


CompletionStatus = Literal["success", "failure", "partial"]
"""What ``complete(result, status)`` says of the objective."""

StopReason = Literal["completed", "turn_limit", "error", "interrupted", "closed"]


class SessionOutcome(msgspec.Struct, frozen=True):
    """How the last input ended: the final text, whether it completed naturally, and
    the model turns used in the whole session."""

    state: SessionState
    output: str
    success: bool
    turns_used: int
    stop_reason: StopReason
    error: str | None = None
    completion_status: CompletionStatus | None = None
    """The status ``complete`` gave, when the input ended an agentic loop with it
    (``success`` is false for ``failure`` and ``partial``)."""
    spend: Spend | None = None
    """The whole session's spend, its subagents' included (:class:`Spend`)."""
    subagent_spend: dict[str, Spend] = {}
    """Each direct subagent's spend (its own subagents' included), by agent id."""


class SessionSnapshot(msgspec.Struct, frozen=True):
    session_id: str
    state: SessionState
    profile: str
    model: str
    history: list[Turn]
    config: SessionConfig
    pending_steering: list[str]
    pending_follow_ups: list[str]
    loop_state: LoopState | None = None
    """None until the first input starts."""


SubAgentStatus = Literal["running", "completed", "failed", "closed"]


class SubAgentResult(msgspec.Struct, frozen=True):
    """What a parent learns of a subagent (coding-agent-loop-spec §7.3)."""

    agent_id: str
    address: str
    status: SubAgentStatus
    output: str
    success: bool
    turns_used: int
    workspace: str = ""
    """Where its changes are, when it is isolated: its worktree and branch, or its
    container (empty when it works in its parent's directory)."""
